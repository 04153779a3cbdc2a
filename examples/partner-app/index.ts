/**
 * A partner app: lists the user's devices, subscribes to their pushes and status events, and prints
 * every verified webhook. Settings come from the environment (the sandbox prints them all).
 */
import { ApplianceCloud, isApplianceCloudError, type WebhookMessage } from '@appliance-cloud/client';
import { startNodeHttpReceiver } from '../receivers/node-http.js';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const client = new ApplianceCloud({
  baseUrl: setting('APPLIANCE_CLOUD_URL'),
  serviceId: setting('SERVICE_ID'),
  serviceKey: setting('SERVICE_KEY'),
  countryCode: setting('COUNTRY_CODE'),
  accessToken: setting('ACCESS_TOKEN'),
});

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
  // Already subscribed (1207) from an earlier run is fine.
  await client.subscribePush(deviceId).catch((error: unknown) => {
    if (!isApplianceCloudError(error, '1207')) throw error;
  });
  await client.subscribeEvents(deviceId, { unit: 'HOUR', timer: 1 });
}
console.log(`subscribed to ${devices.length} devices; waiting for webhooks`);
