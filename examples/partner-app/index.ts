/**
 * A partner app: links an owner with the device flow (or takes ACCESS_TOKEN, e.g. the sandbox's),
 * lists their devices, subscribes to their pushes and status events, and prints every verified
 * webhook. Settings come from the environment (the sandbox prints them all).
 */
import { ApplianceCloud, isApplianceCloudError, oauth, type TokenProvider, type WebhookMessage } from '@appliance-cloud/client';
import { startNodeHttpReceiver } from '../receivers/node-http.js';

function setting(name: string): string {
  if (!process.env[name]) throw new Error(`${name} is required`);
  return process.env[name];
}
const [baseUrl, serviceId, serviceKey] = [setting('APPLIANCE_CLOUD_URL'), setting('SERVICE_ID'), setting('SERVICE_KEY')];

/** The owner opens the printed page, signs in and types the code; the tokens then refresh themselves. */
async function linkOwner(): Promise<TokenProvider> {
  const [metadata, client] = [await oauth.discover(baseUrl), { clientId: serviceId, clientSecret: serviceKey }];
  const started = await oauth.startDeviceAuthorization(metadata, client, ['devices', 'push', 'events']);
  console.log(`to link your appliances, open ${started.verificationUri} and enter ${started.userCode}`);
  let tokens = await oauth.pollDeviceToken(metadata, client, started);
  // A real app keeps them in its database: the rotated refresh token must survive a restart.
  return oauth.refreshingTokenProvider({ metadata, client, store: { load: async () => tokens, save: async (fresh) => void (tokens = fresh) } });
}

const accessToken = process.env.ACCESS_TOKEN;
const tokenProvider = accessToken ? () => accessToken : await linkOwner();
const client = new ApplianceCloud({ baseUrl, serviceId, serviceKey, countryCode: setting('COUNTRY_CODE'), tokenProvider });

function print(message: WebhookMessage): void {
  if (message.pushType === 'DEVICE_STATUS') console.log(`DEVICE_STATUS ${message.event.deviceId} ${JSON.stringify(message.event.report)}`);
  else if (message.pushType === 'DEVICE_PUSH') console.log(`DEVICE_PUSH ${message.push.deviceId} ${message.push.pushCode}`);
  else console.log(`${message.pushType} ${message.push.deviceId}`);
}

const receiver = await startNodeHttpReceiver({ secrets: [setting('WEBHOOK_SECRET')], port: Number(process.env.WEBHOOK_PORT ?? 0), onMessage: print });
console.log(`receiving webhooks at ${receiver.url}`);

const devices = await client.listDevices();
for (const { deviceId, deviceInfo } of devices) {
  console.log(`${deviceInfo.deviceType.padEnd(24)} ${deviceId}  ${deviceInfo.alias}`);
  await client.subscribePush(deviceId).catch((error: unknown) => {
    if (!isApplianceCloudError(error, '1207')) throw error; // 1207: subscribed by an earlier run
  });
}
// Event subscriptions expire (here after an hour): a running app renews them before they do.
const subscribeEvents = () => Promise.all(devices.map(({ deviceId }) => client.subscribeEvents(deviceId, { unit: 'HOUR', timer: 1 })));
await subscribeEvents();
setInterval(() => void subscribeEvents().catch((error: unknown) => console.error('renewing event subscriptions:', error)), 50 * 60_000);
console.log(`subscribed to ${devices.length} devices; waiting for webhooks`);
