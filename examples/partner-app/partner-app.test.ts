/** The partner app as a process against a sandbox process delivering to it. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../packages/client/test/sandbox.js';
import { exitCode, stdoutUntil } from '../../test/cli/process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('examples/partner-app', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox?.stop());

  it('lists the devices, subscribes, and prints the verified webhooks the sandbox sends', async () => {
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
        ACCESS_TOKEN: credentials.accessToken,
        WEBHOOK_SECRET: credentials.webhookSecret,
      },
    });
    try {
      const started = await stdoutUntil(app, /waiting for webhooks/);
      expect(started).toContain(`subscribed to ${sandbox.devices.length} devices`);
      expect(started).toContain(sandbox.deviceOf('DEVICE_WASHER'));
      // The app listens on a free port; the service's callback URL is pointed at it, as an operator would.
      const callbackUrl = /receiving webhooks at (\S+)/.exec(started)![1]!;
      await sandbox.admin('PATCH', `/admin/services/${credentials.serviceId}`, { callbackUrl });
      const washer = sandbox.deviceOf('DEVICE_WASHER');
      const fridge = sandbox.deviceOf('DEVICE_REFRIGERATOR');
      // Both lines, in either order: only the messages of one device are ordered.
      const printed = stdoutUntil(app, new RegExp(`^(?=[^]*DEVICE_PUSH ${washer} WASHING_IS_COMPLETE)(?=[^]*DEVICE_STATUS ${fridge} [^\\n]*"targetTemperatureC":6)`));
      await sandbox.admin('POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
      await sandbox.client().control<'DEVICE_REFRIGERATOR'>(fridge, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 6 } });
      await printed;
    } finally {
      app.kill('SIGTERM');
      await exitCode(app);
    }
  });
});
