/**
 * The chaos run's world, made through a node's admin API as an operator would: a service calling
 * back the receiver, a user connected to it, real (MQTT) ceiling fans with their secrets, and, as the
 * partner, the device list loaded and an event subscription on every fan.
 */
import { call, ok } from '../../test/cluster/nodes.js';
import type { LoadWorld } from './load.js';

// MIN_ADMIN_TOKEN_LENGTH characters or more, so that serve's warning of a short token does not fill the nodes' logs.
export const ADMIN_TOKEN = 'chaos-admin-token-of-thirty-two-c';
const DEVICE_TYPE = 'DEVICE_CEILING_FAN';

export interface ChaosWorld extends LoadWorld {
  serviceId: string;
  webhookSecret: string;
  devices: { deviceId: string; secret: string }[];
}

export async function createWorld(nodeUrl: string, callbackUrl: string, deviceCount: number): Promise<ChaosWorld> {
  const admin = async (path: string, body?: unknown) => ok(await call(nodeUrl, 'POST', `/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body), `POST /admin${path}`);
  const service = await admin('/services', { name: 'chaos', allowedDevices: [DEVICE_TYPE], callbackUrl });
  const { userNumber, countryCode } = await admin('/users', { countryCode: 'KR' });
  const devices: ChaosWorld['devices'] = [];
  for (let i = 0; i < deviceCount; i++) {
    const device = await admin(`/users/${userNumber}/devices`, { deviceType: DEVICE_TYPE, alias: `Fan ${i}`, virtual: false });
    devices.push({ deviceId: String(device.deviceId), secret: String(device.deviceSecret) });
  }
  const { accessToken } = await admin(`/users/${userNumber}/tokens`, { serviceId: service.serviceId });
  const partnerHeaders = {
    authorization: `Bearer ${String(accessToken)}`,
    'x-country-code': String(countryCode),
    'x-service-id': String(service.serviceId),
    'x-service-key': String(service.serviceKey),
  };
  ok(await call(nodeUrl, 'GET', '/devices', partnerHeaders), 'GET /devices');
  for (const { deviceId } of devices) {
    ok(await call(nodeUrl, 'POST', `/event/${deviceId}`, partnerHeaders, { expire: { unit: 'DAY', timer: 1 } }), `POST /event/${deviceId}`);
  }
  return { serviceId: String(service.serviceId), webhookSecret: String(service.webhookSecret), devices, adminToken: ADMIN_TOKEN, partnerHeaders };
}
