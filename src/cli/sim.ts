/**
 * `appliance-cloud sim …`: the sandbox controls of DESIGN D. Virtual appliances live in the running
 * server's process, so these commands call its admin API over HTTP rather than the database;
 * `sim devices` runs appliances in this process instead, as real MQTT clients of the server's broker.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ConfigError, isMqttUrl } from '../config.js';
import { DEVICE_TYPES, listModels } from '../catalog/index.js';
import { ApiError, fail } from '../errors.js';
import { redactUrl } from '../gateway/bridge.js';
import { parseJsonText, type JsonTextError } from '../json.js';
import { actionsFor } from '../sim/actions.js';
import { parseDeviceList, startFleet, type DeviceCredentials } from '../sim/mqtt/fleet.js';
import { isTimeScale, TIME_SCALE_RANGE } from '../sim/time-scale.js';
import { json } from './admin.js';
import { callAdmin, targetOf, type Target } from './target.js';

/** The line `sim devices` prints: the --devices file shape, so that the same devices can connect later. */
function devicesLine(mqttUrl: string, devices: DeviceCredentials[]): string {
  return `${JSON.stringify({ mqttUrl, devices })}\n`;
}

/**
 * Registers `count` real devices of each type to a user through the admin API; the secrets are in its
 * answers only. When a registration fails, those registered before it are printed, as the line of
 * every run, and the failure says so.
 */
async function registerDevices(target: Target, userNumber: string, types: string[], count: number, mqttUrl: string): Promise<DeviceCredentials[]> {
  const registered: DeviceCredentials[] = [];
  try {
    for (const deviceType of types) {
      for (let i = 1; i <= count; i += 1) {
        const body = { deviceType, alias: `Simulated ${deviceType.replace(/^DEVICE_/, '').toLowerCase().replaceAll('_', ' ')} ${i}`, virtual: false };
        const answer = (await callAdmin(target, 'POST', `/admin/users/${encodeURIComponent(userNumber)}/devices`, body)) as {
          deviceId: string;
          deviceSecret: string;
          modelName: string;
        };
        registered.push({ deviceId: answer.deviceId, secret: answer.deviceSecret, deviceType, modelName: answer.modelName });
      }
    }
  } catch (error) {
    if (registered.length === 0) throw error;
    process.stdout.write(devicesLine(mqttUrl, registered));
    throw withNote(error, `; the ${registered.length} device(s) registered before it are printed above, to connect later with --devices <file>`);
  }
  return registered;
}

/** The error with a note after its message, of the same kind, so that the exit code stays its own. */
function withNote(error: unknown, note: string): unknown {
  if (error instanceof ApiError) return new ApiError(error.code, `${error.message}${note}`);
  if (error instanceof ConfigError) return new ConfigError(`${error.message}${note}`);
  return error;
}

function deviceTypesOf(value: string | undefined): string[] {
  if (value === undefined) return [...DEVICE_TYPES];
  const types = value.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = types.filter((t) => !DEVICE_TYPES.includes(t));
  if (unknown.length || !types.length) throw fail('1102', `--types must list some of ${DEVICE_TYPES.join(', ')}; got ${JSON.stringify(value)}.`);
  return types;
}

function positiveInteger(name: string, value: string): number {
  const n = Number(value);
  if (!(n > 0) || !Number.isInteger(n)) throw fail('1102', `${name} must be a positive integer; got ${JSON.stringify(value)}.`);
  return n;
}

/** The JSON of a --devices file: one that cannot be read is a setting to fix (exit 2), one that is not JSON refused as a body is (1000). */
function readDeviceFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--devices: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}); name the file \`sim devices\` printed`);
  }
  try {
    return parseJsonText(text);
  } catch (error) {
    throw fail('1000', `--devices ${path} ${(error as JsonTextError).message}.`);
  }
}

/** `--mqtt-version` as mqtt.js names it; a Map, so that `constructor` is no version. */
const MQTT_VERSIONS = new Map<string, 4 | 5>([
  ['3.1.1', 4],
  ['5', 5],
]);

/**
 * `sim devices`: registers devices (or reads them from --devices), connects each to the broker as
 * a real appliance and keeps them living until SIGTERM or SIGINT. Prints one JSON line once all are
 * online, in the --devices file shape so that the same devices can be reconnected later.
 */
function devicesCommand(env: NodeJS.ProcessEnv): Command {
  return new Command('devices')
    .description('connect virtual appliances to the broker as real MQTT devices, from this process (the reference device client)')
    .requiredOption('--mqtt-url <url>', 'the broker devices connect to, e.g. mqtt://127.0.0.1:1883')
    .option('--user <userNumber>', 'register new devices to this user through the admin API')
    .option('--types <types>', 'comma-separated device types to register [default every type]')
    .option('--count <n>', 'devices to register per type', '1')
    .option('--devices <file>', 'connect these registered devices instead: the line sim devices printed, or a JSON array of {deviceId, secret, deviceType, modelName}')
    .option('--time-scale <scale>', 'simulated minutes per real minute', '1')
    .option('--mqtt-version <version>', 'the MQTT version the devices speak: 3.1.1 or 5', '3.1.1')
    .action(async (options: Record<string, string | undefined>, command: Command) => {
      // Checked before any device is registered, so that a mistyped URL leaves none behind.
      if (!isMqttUrl(options.mqttUrl!)) {
        throw fail('1102', `--mqtt-url must be mqtt://, mqtts://, ws:// or wss:// and a host, as in mqtt://127.0.0.1:1883; got ${JSON.stringify(options.mqttUrl)}.`);
      }
      const timeScale = Number(options.timeScale);
      if (!isTimeScale(timeScale)) throw fail('1102', `--time-scale must be ${TIME_SCALE_RANGE}; got ${JSON.stringify(options.timeScale)}.`);
      const protocolVersion = MQTT_VERSIONS.get(options.mqttVersion!);
      if (protocolVersion === undefined) throw fail('1102', `--mqtt-version must be 3.1.1 or 5; got ${JSON.stringify(options.mqttVersion)}.`);
      let devices: DeviceCredentials[];
      if (options.devices !== undefined) {
        devices = parseDeviceList(readDeviceFile(options.devices));
      } else if (options.user !== undefined) {
        const count = positiveInteger('--count', options.count!);
        devices = await registerDevices(targetOf(command.optsWithGlobals(), env), options.user, deviceTypesOf(options.types), count, options.mqttUrl!);
      } else {
        throw fail('1102', 'Say which devices: --user <userNumber> to register new ones, or --devices <file> for registered ones.');
      }
      const fleet = await startFleet({
        mqttUrl: options.mqttUrl!,
        protocolVersion,
        devices,
        timeScale,
        onError: (error, deviceId) => process.stderr.write(`device ${deviceId}: ${error instanceof Error ? error.message : String(error)}\n`),
      }).catch((error: unknown) => {
        // Devices registered just now have their secrets nowhere else: printed, they can connect later with --devices.
        const registered = options.devices === undefined;
        if (registered) process.stdout.write(devicesLine(options.mqttUrl!, devices));
        const why = error instanceof Error ? error.message : String(error);
        throw new ConfigError(`--mqtt-url ${redactUrl(options.mqttUrl!)}: ${why}${registered ? '; the devices registered are printed above, to connect later with --devices <file>' : ''}`);
      });
      // The MQTT connections keep the process alive until a signal stops the fleet; taken before the line
      // is printed, so that a stop the moment it shows still says offline.
      const onSignal = () => {
        process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
        fleet.stop().then(() => process.exit(0), (error: unknown) => {
          process.stderr.write(`appliance-cloud: stopping failed: ${String(error)}\n`);
          process.exit(1);
        });
      };
      process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
      process.stdout.write(devicesLine(options.mqttUrl!, devices));
    });
}

/** The actions each type's models offer, for `sim act --help`. */
function actionsHelp(): string {
  const rows = DEVICE_TYPES.map((deviceType) => {
    const names = new Set(listModels(deviceType).flatMap((model) => Object.keys(actionsFor(model))));
    return `  ${deviceType}\n    ${[...names].join(', ')}`;
  });
  return `\nActions by device type (args as JSON, e.g. '{"minutes": 30}' for start, '{"pushCode": "…"}' for raise-error):\n${rows.join('\n')}\n`;
}

export function simCommand(env: NodeJS.ProcessEnv): Command {
  const sim = new Command('sim')
    .description("drive the running server's virtual appliances through its admin API")
    .option('--url <url>', 'the server [default: where the sandbox of DATABASE_URL listens, as its data/sandbox.json records, else http://127.0.0.1:$PORT]')
    .option('--admin-token <token>', 'its admin token [env ADMIN_TOKEN, else the sandbox\'s data/sandbox.json]');
  const run = (call: (target: Target, args: string[], options: Record<string, unknown>) => Promise<unknown>) => async (...params: unknown[]) => {
    const command = params.at(-1) as Command;
    const result = await call(targetOf(command.optsWithGlobals(), env), params.slice(0, -2) as string[], command.opts());
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  };
  sim.command('time-scale').argument('[scale]', '1 = real time').description("set how fast the deployment's virtual appliances live; without a scale, print it")
    .action(run((target, [scale]) => (scale === undefined ? callAdmin(target, 'GET', '/admin/sim/time-scale') : callAdmin(target, 'PUT', '/admin/sim/time-scale', { scale: Number(scale) }))));
  sim.command('control').arguments('<deviceId> <command>')
    .description("send a control command, as JSON, to a device (virtual or real) as a partner would, and print its status after it")
    .option('--conditional', 'check the conditions of x-conditional-control first (2301–2305)')
    .action(run((target, [deviceId, command], options) =>
      callAdmin(target, 'POST', `/admin/devices/${encodeURIComponent(deviceId!)}/control${options.conditional ? '?conditional=true' : ''}`, json('command', command!))));
  sim.command('act').arguments('<deviceId> <action> [args]')
    .description("act on a virtual appliance as a person at it would; the actions depend on the device's type (below) and model, and an unknown one is refused with the device's own list")
    .addHelpText('after', actionsHelp())
    .action(run((target, [deviceId, action, args]) =>
      callAdmin(target, 'POST', `/admin/devices/${encodeURIComponent(deviceId!)}/sim`, { action, ...(args === undefined ? {} : { args: json('args', args) }) })));
  sim.command('scenario').arguments('<name> <userNumber>').description('run a named scenario, e.g. laundry-day, dinner, cleaning-day')
    .action(run((target, [name, userNumber]) => callAdmin(target, 'POST', `/admin/sim/scenarios/${encodeURIComponent(name!)}`, { userNumber })));
  sim.addCommand(devicesCommand(env));
  return sim;
}
