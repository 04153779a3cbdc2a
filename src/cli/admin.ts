/**
 * `appliance-cloud admin …`: the calls of the admin API (DESIGN D) made directly on the store of
 * DATABASE_URL through the same domain functions, printing what the API would answer as JSON (a
 * resend prints the message resent, where the API answers `{}`).
 */
import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { describeValidation } from '../api/plugins/errors.js';
import { MESSAGE_STATUSES, NewDeviceBody, NewServiceBody, NewTokenBody, NewUserBody, RenameBody, ServicePatchBody } from '../admin/schemas.js';
import { DEVICE_TYPES } from '../catalog/index.js';
import { parseLimit, parseSince } from '../admin/messages.js';
import { wellFormedDeviceId } from '../admin/common.js';
import { deviceView, iso, messageView, serviceView } from '../admin/views.js';
import { ConfigError, DEPLOYMENT_RECORD, loadConfig, sqliteFile, withDeploymentRecord, type Config, type Settings } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { fail } from '../errors.js';
import { parseJsonText, type JsonTextError } from '../json.js';
import type { Clock } from '../ids.js';
import { processClock } from '../store/database-time.js';
import { openStore } from '../store/index.js';
import type { MessageStatus } from '../core/model.js';
import type { Page } from '../store/areas/overview.js';
import { addSettingOptions, readSettings, type SettingName } from './settings.js';

type Options = Record<string, string | boolean | undefined>;
type Handler = (ctx: AppContext, args: string[], options: Options) => Promise<unknown>;

/** The settings `admin` takes, from its flags or the environment. */
const ADMIN_SETTINGS = ['DATABASE_URL', 'REGION', 'PHASE', 'DELIVERY_ALLOW_LIST'] as const satisfies readonly SettingName[];

/**
 * The config of a command that only touches the database: the sandbox's defaults, because the
 * command has the database itself and so needs no ADMIN_TOKEN. Only the settings it takes (`names`)
 * are read: the rest of the environment is a server's (its PORT, LOG_LEVEL, MQTT_URL), which this
 * command neither uses nor offers a flag to correct.
 */
export function databaseConfig(options: Record<string, unknown>, env: NodeJS.ProcessEnv, names: readonly SettingName[]): Config {
  return loadConfig('sandbox', pickSettings(readSettings(options, env), names));
}

function pickSettings(settings: Settings, names: readonly SettingName[]): Settings {
  return Object.fromEntries(names.map((name) => [name, settings[name]]));
}

/**
 * An admin command works on an existing database: a SQLite file that is not there is a mistyped
 * DATABASE_URL, not a request for a new, empty one (`migrate` creates it when that is meant).
 */
function existingDatabase(databaseUrl: string): string {
  const file = sqliteFile(databaseUrl);
  if (file !== null && !existsSync(file)) {
    throw new ConfigError(`DATABASE_URL: no database at ${file}; check the path, or create it with \`appliance-cloud migrate --database-url ${databaseUrl}\``);
  }
  return databaseUrl;
}

/** Opens the store, runs `handler` on a context over it, prints its result as JSON, closes the store. */
function action(env: NodeJS.ProcessEnv, handler: Handler) {
  return async (...params: unknown[]): Promise<void> => {
    // Commander calls an action with the positional arguments, then the options, then the command.
    const command = params.at(-1) as Command;
    const options = command.optsWithGlobals();
    // Checked before the database is opened: a setting given wrong is refused as it is.
    const given = databaseConfig(options, env, ADMIN_SETTINGS);
    const store = await openStore(existingDatabase(given.databaseUrl));
    let time: { clock: Clock; stop: () => void } | undefined;
    try {
      // Settings not given are the database's server's, as it recorded them (DEPLOYMENT_RECORD).
      const recorded = await store.readSharedSetting(DEPLOYMENT_RECORD);
      const config = loadConfig('sandbox', withDeploymentRecord(pickSettings(readSettings(options, env), ADMIN_SETTINGS), recorded));
      // The times it writes (a resend's, a recovery's) are compared with the nodes', which keep the database's.
      time = await processClock(store.capabilities);
      const ctx = createContext(config, store, time.clock);
      const result = await handler(ctx, params.slice(0, -2) as string[], command.opts());
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      time?.stop();
      await store.close();
    }
  };
}

function text(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' ? value : undefined;
}

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** An empty URL option clears the URL. */
function clearable(value: string): string | null {
  return value === '' ? null : value;
}

function integer(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw fail('1102', `${name} must be an integer from 1 to ${max}; got ${JSON.stringify(value)}.`);
  return n;
}

function bool(name: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw fail('1102', `${name} must be true or false; got ${JSON.stringify(value)}.`);
}

/** JSON of the command line, refused as the admin API refuses a body (DESIGN J): too deep a value would overflow the stack of the code that walks it. */
export function json(name: string, value: string): unknown {
  try {
    return parseJsonText(value);
  } catch (error) {
    throw fail('1000', `${name} ${(error as JsonTextError).message}.`);
  }
}

/**
 * A command's input checked against the admin API's schema of the same call, with its messages: the
 * CLI refuses what the API refuses (an empty name, an alias over 100 characters, an empty groupId).
 */
function checked<T extends TSchema>(schema: T, body: Static<T>): Static<T> {
  const [issue] = Value.Errors(schema, body);
  if (issue === undefined) return body;
  const { code, message } = describeValidation(issue, 'body');
  throw fail(code, message);
}

/** --after and --limit of a listing. */
function page(options: Options): Page {
  const after = text(options, 'after');
  return { ...(after !== undefined ? { after } : {}), limit: parseLimit(text(options, 'limit')) };
}

function servicesCommand(env: NodeJS.ProcessEnv): Command {
  const services = new Command('services').description('calling services');
  services.command('create').description('create a service; prints its key and webhook secret, shown once')
    .requiredOption('--name <name>', "the service's name, as operators see it")
    .requiredOption('--allowed-devices <types>', `comma-separated device types the service may see: ${DEVICE_TYPES.join(', ')}`)
    .option('--callback-url <url>', 'where its push messages are POSTed (https in phase OP) [default none: messages are held until set]')
    .option('--event-callback-url <url>', 'where its DEVICE_STATUS events are POSTed [default the callback URL]')
    .option('--redirect-uris <uris>', 'comma-separated OAuth redirect URIs (DESIGN G): exact match; http://127.0.0.1 and localhost only in phase QA')
    .action(action(env, async ({ accounts }, _args, o) => {
      const redirectUris = text(o, 'redirectUris');
      const { service, serviceKey, webhookSecret } = await accounts.createService(checked(NewServiceBody, {
        name: text(o, 'name')!,
        allowedDevices: list(text(o, 'allowedDevices')!),
        callbackUrl: text(o, 'callbackUrl') ?? null,
        eventCallbackUrl: text(o, 'eventCallbackUrl') ?? null,
        ...(redirectUris !== undefined ? { redirectUris: list(redirectUris) } : {}),
      }));
      return { serviceId: service.serviceId, serviceKey, webhookSecret };
    }));
  services.command('list').description('every service, without secrets')
    .action(action(env, async ({ accounts }) => Promise.all((await accounts.listServices()).map(async (s) => serviceView(s, await accounts.redirectUris(s.serviceId))))));
  services.command('get').argument('<serviceId>').description('one service, without secrets')
    .action(action(env, async ({ accounts }, [serviceId]) => serviceView(await accounts.getService(serviceId!), await accounts.redirectUris(serviceId!))));
  services.command('update').argument('<serviceId>').description('change a service; an empty URL clears it')
    .option('--name <name>', "the service's name").option('--allowed-devices <types>', 'comma-separated device types, replacing the list')
    .option('--callback-url <url>', 'where push messages are POSTed').option('--event-callback-url <url>', 'where events are POSTed')
    .option('--enabled <boolean>', 'true or false; a disabled service is refused and its messages held')
    .option('--redirect-uris <uris>', 'comma-separated OAuth redirect URIs, replacing the list; an empty value clears them')
    .action(action(env, async ({ accounts }, [serviceId], o) => {
      const [name, allowed, callbackUrl, eventCallbackUrl, enabled, redirectUris] =
        (['name', 'allowedDevices', 'callbackUrl', 'eventCallbackUrl', 'enabled', 'redirectUris'] as const).map((key) => text(o, key));
      const patch = {
        ...(name !== undefined ? { name } : {}),
        ...(allowed !== undefined ? { allowedDevices: list(allowed) } : {}),
        ...(callbackUrl !== undefined ? { callbackUrl: clearable(callbackUrl) } : {}),
        ...(eventCallbackUrl !== undefined ? { eventCallbackUrl: clearable(eventCallbackUrl) } : {}),
        ...(enabled !== undefined ? { enabled: bool('enabled', enabled) } : {}),
        ...(redirectUris !== undefined ? { redirectUris: redirectUris === '' ? [] : list(redirectUris) } : {}),
      };
      return serviceView(await accounts.updateService(serviceId!, checked(ServicePatchBody, patch)), await accounts.redirectUris(serviceId!));
    }));
  services.command('rotate-secret').argument('<serviceId>').description('a new webhook secret; the previous one signs for 24 h more')
    .addOption(new Option('--expire-previous-now', 'retire the previous secret at once (it leaked): only the new one signs'))
    .action(action(env, async ({ accounts }, [serviceId], o) => ({
      webhookSecret: await accounts.rotateSecret(serviceId!, { expirePreviousNow: o.expirePreviousNow === true }),
    })));
  return services;
}

function usersCommand(env: NodeJS.ProcessEnv): Command {
  const users = new Command('users').description('users');
  users.command('create').description('create a user')
    .requiredOption('--country-code <code>', 'ISO 3166-1 alpha-2, upper case').option('--user-number <userNumber>', 'generated when absent')
    .option('--email <email>', "the owner's login to /oauth and /account (with --password)").option('--password <password>')
    .action(action(env, async ({ owners }, _args, o) => {
      const { countryCode, ...options } = checked(NewUserBody, {
        countryCode: text(o, 'countryCode')!,
        userNumber: text(o, 'userNumber'),
        email: text(o, 'email'),
        password: text(o, 'password'),
      });
      const user = await owners.createUser(countryCode, options);
      return { userNumber: user.userNumber, countryCode: user.countryCode, ...(user.email !== undefined ? { email: user.email } : {}) };
    }));
  users.command('list').description('users by userNumber, a page at a time')
    .option('--after <userNumber>', 'start after this one: the last of the previous page').option('--limit <n>', '1 to 1000; default 100')
    .action(action(env, async ({ accounts }, _args, o) => {
      const users = await accounts.listUsers(page(o));
      return users.map((user) => ({ userNumber: user.userNumber, countryCode: user.countryCode }));
    }));
  users.command('delete').argument('<userNumber>').description("delete a user, unregistering the user's devices first")
    .action(action(env, async ({ accounts }, [userNumber]) => {
      await accounts.deleteUser(userNumber!);
      return {};
    }));
  return users;
}

function tokensCommand(env: NodeJS.ProcessEnv): Command {
  const tokens = new Command('tokens').description('access tokens');
  tokens.command('create').argument('<userNumber>').description('issue an access token; connects the user to the service')
    .requiredOption('--service-id <serviceId>', 'the service the token calls for').option('--expires-in-seconds <seconds>', 'default 86400')
    .action(action(env, async ({ accounts }, [userNumber], o) => {
      const expiresIn = integer('expiresInSeconds', text(o, 'expiresInSeconds'), 315_360_000);
      const { serviceId } = checked(NewTokenBody, { serviceId: text(o, 'serviceId')! });
      const token = await accounts.issueToken(userNumber!, serviceId, expiresIn);
      return { accessToken: token.accessToken, expiresAt: iso(token.expiresAt) };
    }));
  return tokens;
}

function devicesCommand(env: NodeJS.ProcessEnv): Command {
  const devices = new Command('devices').description('devices');
  devices.command('register').argument('<userNumber>').description("register a device to a user; prints its secret, shown once")
    .requiredOption('--device-type <type>', `one of ${DEVICE_TYPES.join(', ')}`).requiredOption('--alias <alias>', 'the name its users see')
    .option('--model-name <name>', "one of the catalog's models of the type [default its first]").option('--device-id <deviceId>', 'generated when absent')
    .option('--group-id <groupId>', 'washtower halves only')
    .addOption(new Option('--virtual', 'attach a simulated appliance, online at once (default: a real device, offline until it connects)'))
    .action(action(env, async (ctx, [userNumber], o) => {
      const { device, deviceSecret } = await ctx.devices.register(userNumber!, checked(NewDeviceBody, {
        deviceType: text(o, 'deviceType')!,
        alias: text(o, 'alias')!,
        virtual: o.virtual === true,
        ...(text(o, 'modelName') !== undefined ? { modelName: text(o, 'modelName')! } : {}),
        ...(text(o, 'deviceId') !== undefined ? { deviceId: text(o, 'deviceId')! } : {}),
        ...(text(o, 'groupId') !== undefined ? { groupId: text(o, 'groupId')! } : {}),
      }));
      const { userNumbers: _users, createdAt: _created, deviceId, ...shown } = deviceView(device);
      return { deviceId, deviceSecret, ...shown };
    }));
  devices.command('list').description('every registered device with its users, by deviceId, a page at a time')
    .option('--after <deviceId>', 'start after this one: the last of the previous page').option('--limit <n>', '1 to 1000; default 100')
    .action(action(env, async (ctx, _args, o) => (await ctx.devices.list(page(o))).map(deviceView)));
  devices.command('share').arguments('<userNumber> <deviceId>').description('share an existing device with another user of the home')
    .action(action(env, async (ctx, [userNumber, deviceId]) => {
      await ctx.devices.share(wellFormedDeviceId(deviceId!), userNumber!);
      return {};
    }));
  devices.command('unregister').arguments('<userNumber> <deviceId>').description('unregister a device from a user')
    .action(action(env, async (ctx, [userNumber, deviceId]) => {
      await ctx.devices.unregister(wellFormedDeviceId(deviceId!), userNumber!);
      return {};
    }));
  devices.command('rename').argument('<deviceId>').requiredOption('--alias <alias>', 'the new name').description('rename a device')
    .action(action(env, async (ctx, [deviceId], o) => {
      const { alias } = checked(RenameBody, { alias: text(o, 'alias')! });
      return deviceView(await ctx.devices.rename(wellFormedDeviceId(deviceId!), alias));
    }));
  devices.command('get').argument('<deviceId>').description('a device with its status, connection and version')
    .action(action(env, async (ctx, [deviceId]) => {
      const device = await ctx.devices.get(wellFormedDeviceId(deviceId!));
      const state = await ctx.devices.state(device.deviceId);
      return { device: deviceView(device), status: state.status, online: state.online, version: state.version };
    }));
  devices.command('report').arguments('<deviceId> <status>').description("report a partial status, as JSON, as the device would")
    .action(action(env, async (ctx, [deviceId, status]) => ({ version: (await ctx.devices.report(wellFormedDeviceId(deviceId!), json('status', status!))).version })));
  devices.command('push').arguments('<deviceId> <pushCode>').description("raise one of the profile's notifications")
    .action(action(env, async (ctx, [deviceId, pushCode]) => {
      await ctx.devices.push(wellFormedDeviceId(deviceId!), pushCode);
      return {};
    }));
  devices.command('connection').arguments('<deviceId> <online>').description('mark a device online or offline (true|false)')
    .action(action(env, async (ctx, [deviceId, online]) => {
      await ctx.devices.setConnection(wellFormedDeviceId(deviceId!), bool('online', online!));
      return {};
    }));
  return devices;
}

function messagesCommand(env: NodeJS.ProcessEnv): Command {
  const messages = new Command('messages').description("a service's messages and their delivery attempts");
  messages.command('list').argument('<serviceId>').description('messages with their attempts, newest first, a page at a time')
    .addOption(new Option('--status <status>', 'only messages in this state').choices(MESSAGE_STATUSES)).option('--device-id <deviceId>', "only this device's messages")
    .option('--since <time>', 'ISO 8601').option('--before <messageId>', 'start after this one: the last of the previous page, listed with the same filters')
    .option('--limit <n>', '1 to 1000; default 100')
    .action(action(env, async ({ accounts }, [serviceId], o) => {
      const since = text(o, 'since');
      const found = await accounts.listMessages(serviceId!, {
        ...(text(o, 'status') !== undefined ? { status: text(o, 'status') as MessageStatus } : {}),
        ...(text(o, 'deviceId') !== undefined ? { deviceId: text(o, 'deviceId')! } : {}),
        ...(since !== undefined ? { since: parseSince(since) } : {}),
        ...(text(o, 'before') !== undefined ? { before: text(o, 'before')! } : {}),
        limit: parseLimit(text(o, 'limit')),
      });
      return found.map(messageView);
    }));
  messages.command('resend').argument('<messageId>').description('put one message back to pending, due now; prints it with its earlier attempts')
    .action(action(env, async ({ accounts }, [messageId]) => messageView(await accounts.resendMessage(messageId!))));
  messages.command('recover').argument('<serviceId>').requiredOption('--since <time>', 'ISO 8601')
    .description('put every failed message created since then back to pending')
    .action(action(env, async ({ accounts }, [serviceId], o) => ({ resent: await accounts.recoverFailed(serviceId!, parseSince(text(o, 'since')!)) })));
  return messages;
}

/**
 * `admin` and its subcommands; `--database-url` (env DATABASE_URL) chooses the database, `--phase`
 * and `--delivery-allow-list` judge callback URLs as the server of that database does, and
 * `--region` says which countries a new user may be of.
 */
export function adminCommand(env: NodeJS.ProcessEnv): Command {
  const admin = addSettingOptions(new Command('admin'), ADMIN_SETTINGS)
    .description('manage services, users, tokens, devices and messages directly in the database');
  for (const sub of [servicesCommand, usersCommand, tokensCommand, devicesCommand, messagesCommand]) admin.addCommand(sub(env));
  return admin;
}
