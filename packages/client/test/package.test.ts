/**
 * The package as a partner gets it: `npm pack` gives a tarball that a fresh project installs offline,
 * type-checks against with tsc (its per-type commands included) and imports as ESM and from CommonJS.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

const CONSUMER = `
import { ApplianceCloud, ApplianceCloudError, verifyWebhook, oauth, type WasherControl, type WebhookMessage } from '@appliance-cloud/client';

const client = new ApplianceCloud({ region: 'KIC', phase: 'QA', domain: 'example.com', serviceId: 's', serviceKey: 'k', countryCode: 'KR', accessToken: 't' });
const washer = client.device('DEVICE_WASHER', 'id');
const start: WasherControl = { location: { locationName: 'MAIN' }, operation: { washerOperationMode: 'START' } };
export const calls = [washer.control(start), client.control<'DEVICE_AIR_CONDITIONER'>('ac', { operation: { airConOperationMode: 'POWER_ON' } })];
// @ts-expect-error a washer has no such mode
washer.control({ operation: { washerOperationMode: 'FLY' } });
// @ts-expect-error the water purifier has no writable property
client.device('DEVICE_WATER_PURIFIER', 'wp').control({ runState: { cockState: 'OPEN' } });
export function describeMessage(message: WebhookMessage): string {
  switch (message.pushType) {
    case 'DEVICE_STATUS': return message.event.deviceId;
    case 'DEVICE_PUSH': return message.push.pushCode;
    default: return message.push.alias;
  }
}
export const kit = [verifyWebhook, oauth.createPkce, ApplianceCloudError];
`;

describe('the packed tarball', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-client-pack-'));
    const { stdout } = await run('npm', ['pack', '-w', '@appliance-cloud/client', '--pack-destination', dir, '--json', '--silent'], { cwd: ROOT });
    const [{ filename, files }] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'README.md', 'package.json']));
    expect(files.some((f) => f.path.startsWith('test/') || f.path.startsWith('scripts/'))).toBe(false);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', join(dir, filename)], { cwd: dir });
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('type-checks a consumer with tsc: typed commands accepted, wrong ones refused', async () => {
    writeFileSync(join(dir, 'index.ts'), CONSUMER);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2023', 'DOM'], types: [] },
      files: ['index.ts'],
    }));
    await expect(run(process.execPath, [TSC, '-p', dir], { cwd: dir })).resolves.toBeTruthy();
  }, 120_000);

  it('imports as ESM and from CommonJS (require of an ES module, Node ≥ 20.19)', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('@appliance-cloud/client'); console.log(typeof m.ApplianceCloud, typeof m.verifyWebhook)"], { cwd: dir });
    expect(esm.stdout.trim()).toBe('function function');
    const cjs = await run(process.execPath, ['-e', "const m = require('@appliance-cloud/client'); console.log(typeof m.ApplianceCloud, m.newMessageId().length)"], { cwd: dir });
    expect(cjs.stdout.trim()).toBe('function 22');
  });
});
