/**
 * `appliance-cloud listen [--forward-to URL]` (as `stripe listen` and `svix listen`): points the
 * running sandbox service's callback URLs at a receiver in this process, prints each delivery with
 * its signature checked, forwards it when told, and on exit puts the callback URLs back.
 */
import { Command } from 'commander';
import { ConfigError } from '../config.js';
import { describeDelivery } from '../listen/describe.js';
import { startReceiver } from '../listen/receiver.js';
import { callAdmin, targetOf, type Target } from './target.js';

interface Callbacks {
  callbackUrl: string | null;
  eventCallbackUrl: string | null;
}

function serviceOf(target: Target, options: Record<string, unknown>): { serviceId: string; secret: string } {
  const serviceId = (options.serviceId as string | undefined) ?? target.sandbox?.serviceId;
  const secret = (options.webhookSecret as string | undefined) ?? target.sandbox?.webhookSecret;
  if (!serviceId || !secret) {
    throw new ConfigError('--service-id and --webhook-secret: no sandbox in the data directory of DATABASE_URL (data/sandbox.json); run from the sandbox folder or pass both');
  }
  return { serviceId, secret };
}

function portOf(raw: string): number {
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) throw new ConfigError(`--port must be an integer from 0 to 65535; got "${raw}"`);
  return port;
}

function time(): string {
  return new Date().toISOString().slice(11, 19);
}

/** --forward-to, an http(s) URL: anything else would fail every delivery (each answered 502, retried by the sandbox), not once here. */
function forwardUrlOf(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new ConfigError(`--forward-to must be an http:// or https:// URL, as in http://localhost:3000/hooks; got "${raw}"`);
  }
  return raw;
}

async function listen(options: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<void> {
  const forwardTo = options.forwardTo !== undefined ? forwardUrlOf(String(options.forwardTo)) : undefined;
  const target = targetOf(options, env);
  const { serviceId, secret } = serviceOf(target, options);
  const path = `/admin/services/${encodeURIComponent(serviceId)}`;
  const before = (await callAdmin(target, 'GET', path)) as Callbacks;
  const port = options.port !== undefined ? portOf(String(options.port)) : undefined;
  const receiver = await startReceiver({
    secrets: [secret],
    ...(forwardTo !== undefined ? { forwardTo } : {}),
    ...(port !== undefined ? { port } : {}),
    onDelivery: (summary) => process.stdout.write(`${time()}  ${describeDelivery(summary)}\n`),
  }).catch((error: unknown) => {
    if (port === undefined) throw error;
    // A port taken is a setting to change, as serve's PORT is: one line and exit 2, not a stack trace.
    throw new ConfigError(`--port: cannot listen on 127.0.0.1:${port} (${(error as NodeJS.ErrnoException).code ?? String(error)}); name a free port, or leave --port out for any`);
  });
  try {
    await callAdmin(target, 'PATCH', path, { callbackUrl: receiver.url, eventCallbackUrl: null });
  } catch (error) {
    await receiver.close();
    throw error;
  }
  const was = before.callbackUrl === null ? 'none was set' : `was ${before.callbackUrl}`;
  const onSignal = (): void => {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    const restore = { callbackUrl: before.callbackUrl, eventCallbackUrl: before.eventCallbackUrl };
    // Exit 1 when the service is left pointing at this receiver, which is about to go: a script must not take that for success.
    callAdmin(target, 'PATCH', path, restore)
      .then(() => {
        process.stdout.write(`Callback URLs of ${serviceId} put back (${was.replace(/^was /, '')}).\n`);
        return 0;
      })
      .catch((error: unknown) => {
        process.stderr.write(`appliance-cloud: could not put the callback URLs back: ${error instanceof Error ? error.message : String(error)}\n`);
        return 1;
      })
      .then((code) => receiver.close().then(() => process.exit(code)));
  };
  // Before Ready: a Ctrl-C the moment Ready shows must still put the URLs back.
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  process.stdout.write(
    `Ready: messages of service ${serviceId} on ${target.url} go to ${receiver.url} (${was})` +
      `${forwardTo !== undefined ? `, forwarded to ${forwardTo}` : ''}. Ctrl-C stops and puts the callback URLs back.\n`,
  );
}

export function listenCommand(env: NodeJS.ProcessEnv): Command {
  return new Command('listen')
    .description("receive the running sandbox's webhooks here: points its service's callback URL at this process, prints each message with its signature checked, and puts the URL back on exit")
    .option('--forward-to <url>', 'also POST each message, headers and raw body unchanged, to your endpoint; its status is what the sandbox sees')
    .option('--port <port>', 'port of the receiver on 127.0.0.1 [default a free one]')
    .option('--url <url>', 'the server [default: where the sandbox of DATABASE_URL listens, as its data/sandbox.json records]')
    .option('--admin-token <token>', "its admin token [env ADMIN_TOKEN, else the sandbox's]")
    .option('--database-url <url>', 'finds the sandbox\'s data directory [env DATABASE_URL; default sqlite:./data/appliance-cloud.db]')
    .option('--service-id <serviceId>', "the service to listen for [default the sandbox's]")
    .option('--webhook-secret <secret>', "its webhook secret, to verify signatures [default the sandbox's]")
    .action(async (options: Record<string, unknown>) => listen(options, env));
}
