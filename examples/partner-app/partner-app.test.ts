/** The partner app as a process against a sandbox process delivering to it: with the sandbox's token, and linking the owner. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../packages/client/test/sandbox.js';
import { exitCode, stdoutUntil } from '../../test/cli/process.js';
import { OwnerAgent } from '../../test/helpers/owner-agent.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('examples/partner-app', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox?.stop());

  /** Runs the app with the sandbox's settings and `env`; `use` gets the process, which is stopped after. */
  async function runApp(env: Record<string, string>, use: (app: ChildProcessWithoutNullStreams) => Promise<void>) {
    const { credentials } = sandbox;
    // The package's name resolves to its source here; a partner runs `npx tsx index.ts` with the package installed.
    const app = spawn(process.execPath, ['--conditions=@appliance-cloud/source', '--import', 'tsx', 'examples/partner-app/index.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        APPLIANCE_CLOUD_URL: sandbox.url,
        SERVICE_ID: credentials.serviceId,
        SERVICE_KEY: credentials.serviceKey,
        COUNTRY_CODE: sandbox.countryCode,
        WEBHOOK_SECRET: credentials.webhookSecret,
        ...env,
      },
    });
    try {
      await use(app);
    } finally {
      app.kill('SIGTERM');
      await exitCode(app);
    }
  }

  it('lists the devices, subscribes, and prints the verified webhooks the sandbox sends', async () => {
    await runApp({ ACCESS_TOKEN: sandbox.credentials.accessToken }, async (app) => {
      const started = await stdoutUntil(app, /waiting for webhooks/);
      expect(started).toContain(`subscribed to ${sandbox.devices.length} devices`);
      expect(started).toContain(sandbox.deviceOf('DEVICE_WASHER'));
      // The app listens on a free port; the service's callback URL is pointed at it, as an operator would.
      const callbackUrl = /receiving webhooks at (\S+)/.exec(started)![1]!;
      await sandbox.admin('PATCH', `/admin/services/${sandbox.credentials.serviceId}`, { callbackUrl });
      const washer = sandbox.deviceOf('DEVICE_WASHER');
      const fridge = sandbox.deviceOf('DEVICE_REFRIGERATOR');
      // Both lines, in either order: only the messages of one device are ordered.
      const printed = stdoutUntil(app, new RegExp(`^(?=[^]*DEVICE_PUSH ${washer} WASHING_IS_COMPLETE)(?=[^]*DEVICE_STATUS ${fridge} [^\\n]*"targetTemperatureC":6)`));
      await sandbox.admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
      await sandbox.client().control<'DEVICE_REFRIGERATOR'>(fridge, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 6 } });
      await printed;
    });
  });

  it('without a token, links the owner who types the printed code on the /device page, then works with the devices shared', async () => {
    await runApp({}, async (app) => {
      const prompt = await stdoutUntil(app, /enter [A-Z]{4}-[A-Z]{4}\n/);
      const [, page, userCode] = /open (\S+) and enter (\S+)/.exec(prompt)!;
      const [washer, oven] = [sandbox.deviceOf('DEVICE_WASHER'), sandbox.deviceOf('DEVICE_OVEN')];
      const subscribed = stdoutUntil(app, /waiting for webhooks/);

      const owner = new OwnerAgent(sandbox.url);
      const confirm = await owner.submit(await owner.follow(page!), /\/oauth\/device$/, { user_code: userCode! });
      const signIn = await owner.submit(confirm, /\/oauth\/device$/, {}, { confirm: 'yes' });
      const consentPage = await owner.submit(signIn, /\/login$/, sandbox.owner);
      await owner.submit(consentPage, /\/consent$/, { share: 'chosen', device: [washer, oven] });

      const started = await subscribed;
      expect(started).toContain('subscribed to 2 devices');
      const callbackUrl = /receiving webhooks at (\S+)/.exec(started)![1]!;
      await sandbox.admin('PATCH', `/admin/services/${sandbox.credentials.serviceId}`, { callbackUrl });
      const printed = stdoutUntil(app, new RegExp(`DEVICE_PUSH ${washer} WASHING_IS_COMPLETE`));
      await sandbox.admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
      await printed;
    });
  }, 30_000);
});
