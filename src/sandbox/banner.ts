/** What the sandbox prints at start, as plain text for a person: where it is and how to call it. */
import { newMessageId } from '../ids.js';
import type { SandboxWorld } from './world.js';

export interface BannerPlace {
  /** What is listening: `http://127.0.0.1:8080`. */
  localUrl: string;
  /** The public base URL of DESIGN A.1 the local URL stands for. */
  baseUrl: string;
  requestedPort: number;
  portTaken: boolean;
  /** The embedded MQTT broker devices connect to (null when there is none), and whether MQTT_PORT was taken. */
  mqtt: { port: number | null; requestedPort: number; portTaken: boolean };
  credentialsFile: string;
  /** The console's one-time sign-in link (DESIGN H). */
  consoleLink: string;
}

/** Quotes a value for a POSIX shell. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A ready `curl` for GET /devices with the five mandatory headers and a fresh message id. */
export function curlLine(world: SandboxWorld, localUrl: string): string {
  const { credentials } = world;
  const headers = [
    `Authorization: Bearer ${credentials.accessToken}`,
    `x-country-code: ${world.countryCode}`,
    `x-message-id: ${newMessageId()}`,
    `x-service-id: ${credentials.serviceId}`,
    `x-service-key: ${credentials.serviceKey}`,
  ];
  return ['curl -s', shellQuote(`${localUrl}/devices`), ...headers.map((h) => `-H ${shellQuote(h)}`)].join(' ');
}

/** Where the service's messages go, or how to make them go somewhere: else they wait unseen. */
function webhookLines(callbackUrl: string | null): string[] {
  if (callbackUrl !== null) return [`  webhooks to     ${callbackUrl}  (signed with the webhookSecret)`];
  return [
    '  webhooks to     none set: messages wait, held, until a callback URL is set.',
    '                  Run `npx appliance-cloud listen` in another terminal to see them here',
    '                  (`--forward-to <your endpoint>` to pass them on), or restart with --callback-url <url>.',
  ];
}

/**
 * A device-flow link from a terminal (RFC 8628, DESIGN G): the service asks for a code, the owner
 * enters it on /device, the service fetches its tokens.
 */
export function deviceFlowLines(world: SandboxWorld, localUrl: string): string[] {
  const client = shellQuote(`${world.credentials.serviceId}:${world.credentials.serviceKey}`);
  return [
    `    curl -s -u ${client} -d 'scope=devices control push events' ${localUrl}/oauth/device_authorization`,
    `    # open ${localUrl}/device, enter the user_code, sign in as the owner above and allow; then, with the device_code:`,
    `    curl -s -u ${client} -d grant_type=urn:ietf:params:oauth:grant-type:device_code -d device_code=DEVICE_CODE ${localUrl}/oauth/token`,
  ];
}

export function formatBanner(world: SandboxWorld, place: BannerPlace): string {
  const { credentials } = world;
  const width = Math.max(...world.devices.map((d) => d.deviceType.length));
  const lines = [
    '',
    'appliance-cloud sandbox — virtual appliances of every type, phase QA',
    '',
    ...(place.portTaken ? [`  PORT ${place.requestedPort} is taken, so the sandbox listens on port ${new URL(place.localUrl).port} instead.`, ''] : []),
    `  local URL       ${place.localUrl}`,
    `  stands for      ${place.baseUrl}`,
    `  docs            ${place.localUrl}/docs`,
    `  console         ${place.consoleLink}  (signs you in once, within 30 minutes; then use the admin token)`,
    ...(place.mqtt.port === null ? [] : [
      `  MQTT broker     mqtt://${new URL(place.localUrl).hostname}:${place.mqtt.port}${place.mqtt.portTaken ? `  (MQTT_PORT ${place.mqtt.requestedPort} is taken)` : ''}`,
    ]),
    '',
    `  serviceId       ${credentials.serviceId}`,
    `  serviceKey      ${credentials.serviceKey}`,
    `  accessToken     ${credentials.accessToken}  (expires ${new Date(credentials.accessTokenExpiresAt).toISOString()})`,
    `  userNumber      ${credentials.userNumber}  (country ${world.countryCode})`,
    `  adminToken      ${credentials.adminToken}`,
    `  webhookSecret   ${credentials.webhookSecret}`,
    ...webhookLines(world.callbackUrl),
    `  saved in        ${place.credentialsFile}`,
    '',
    '  owner login (account linking, DESIGN G)',
    `    email         ${world.owner.email}`,
    `    password      ${world.owner.password}`,
    `    account       ${place.localUrl}/account`,
    `    authorize     ${place.localUrl}/oauth/authorize  (metadata: ${place.localUrl}/.well-known/oauth-authorization-server)`,
    '',
    '  devices',
    ...world.devices.map((d) => `    ${d.deviceType.padEnd(width)}  ${d.deviceId}`),
    '',
    '  first call',
    `    ${curlLine(world, place.localUrl)}`,
    '',
    '  link the owner to the service from a terminal (device flow)',
    ...deviceFlowLines(world, place.localUrl),
    '',
  ];
  return `${lines.join('\n')}\n`;
}
