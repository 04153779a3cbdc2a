/** `appliance-cloud sandbox`: the server in phase QA with the demo world seeded and its credentials printed. */
import { baseUrl, type Config } from '../config.js';
import { randomId } from '../ids.js';
import { installSignalHandlers, startServer, type RunningServer } from '../server.js';
import { formatBanner } from './banner.js';
import { credentialsPath, readCredentials, writeCredentials } from './credentials.js';
import { seedSandbox, type SandboxWorld } from './world.js';

export interface SandboxOptions {
  /** The sandbox service's callbackUrl (`--callback-url`, env CALLBACK_URL). */
  callbackUrl?: string;
}

/**
 * Where a person or a command on this machine reaches the sandbox: the loopback in place of the
 * address that means every interface (HOST=0.0.0.0 in a container), which is no address to
 * connect to (Windows refuses it, browsers are withdrawing it).
 */
function reachableUrl(listening: string): string {
  const url = new URL(listening);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

/** Starts the sandbox; resolves once it listens, its banner is printed and SIGTERM/SIGINT drain it. */
export async function runSandbox(config: Config, options: SandboxOptions = {}): Promise<{ server: RunningServer; world: SandboxWorld }> {
  const file = credentialsPath(config.databaseUrl);
  const saved = readCredentials(file);
  // ADMIN_TOKEN wins; otherwise the one of an earlier run, so admin scripts keep working.
  const adminToken = config.adminToken ?? saved?.adminToken ?? randomId(24);
  let world: SandboxWorld | undefined;
  const server = await startServer({ ...config, adminToken }, {
    anyPortIfTaken: true,
    // Before the banner: a stop the moment it shows drains the sandbox.
    running: installSignalHandlers,
    prepare: async (ctx, app) => {
      world = await seedSandbox(ctx, saved, { adminToken, ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}) });
      writeCredentials(file, world.credentials);
      // "Try it out" in /docs calls as the demo service and user without typing their credentials.
      const { accessToken, serviceId, serviceKey } = world.credentials;
      app.tryItOut.preset({ accessToken, serviceId, serviceKey });
    },
  });
  if (!world) throw new Error('The sandbox world was not seeded');
  // Written again now that the port is known, which may not be PORT.
  const localUrl = reachableUrl(server.url);
  writeCredentials(file, { ...world.credentials, localUrl });
  const banner = formatBanner(world, {
    localUrl,
    baseUrl: baseUrl(config),
    requestedPort: config.port,
    portTaken: server.portTaken,
    mqtt: { ...server.mqtt, requestedPort: config.mqttPort },
    credentialsFile: file,
    consoleLink: `${localUrl}/console/sign-in/${server.app.signInCodes.issue(Date.now())}`,
  });
  process.stdout.write(banner);
  return { server, world };
}
