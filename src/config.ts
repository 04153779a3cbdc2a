/** Settings: environment (and matching CLI flags) → typed values, read and checked once at start. */
import { readFileSync } from 'node:fs';
import { createAddressGuard } from './delivery/address-guard.js';
import { parseRetention } from './delivery/retention.js';
import { parseRetrySchedule } from './delivery/schedule.js';
import { isTimeScale, TIME_SCALE_RANGE } from './sim/time-scale.js';

export type Region = 'KIC' | 'EIC' | 'AIC';
export type Phase = 'QA' | 'OP';
export type Mode = 'sandbox' | 'serve' | 'test';

export interface Config {
  mode: Mode;
  port: number;
  host: string;
  databaseUrl: string;
  adminToken: string | null;
  /** 0 disables the embedded broker. */
  mqttPort: number;
  mqttUrl: string | null;
  /** On an external broker, this deployment's name: its nodes share one MQTT session of it (gateway/device-stream.ts). */
  mqttDeployment: string;
  region: Region;
  phase: Phase;
  domain: string;
  logLevel: string;
  /** Requests per second per calling service; 0 disables rate limiting. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  controlTimeoutMs: number;
  eventSubscriptionLimit: number;
  /** Whether devices registered through the admin API are virtual unless told otherwise. */
  virtualByDefault: boolean;
  simTimeScale: number;
  /** Whether SIM_TIME_SCALE was given: only then does a start set the deployment's time scale. */
  simTimeScaleSet: boolean;
  deliveryRetrySchedule: string;
  deliveryAttemptTimeoutMs: number;
  /** Hosts or CIDRs that phase OP may deliver to although they are private. */
  deliveryAllowList: string[];
  /** How long delivered and failed messages are kept (DESIGN J), as a duration: `7d`, `12h`. */
  messageRetention: string;
  /** Lifetime of the access tokens the authorization server issues, in seconds (DESIGN G). */
  accessTokenTtlSeconds: number;
  /**
   * Where partners reach this deployment (`https://…`, the issuer of the authorization server); null:
   * in phase OP its base URL, in QA the origin of the first request to it (the sandbox, tests).
   */
  publicUrl: string | null;
  version: string;
}

const REGIONS: readonly Region[] = ['KIC', 'EIC', 'AIC'];
const PHASES: readonly Phase[] = ['QA', 'OP'];
/**
 * In production the admin token alone guards /admin, /metrics and the console, and its refusals are not
 * throttled (a throttle on one shared secret would let anyone lock the operators out): its length is
 * the defence against guessing. 32 characters is what the sandbox generates (24 random bytes, base64url).
 */
export const MIN_ADMIN_TOKEN_LENGTH = 32;
/** pino's levels. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const DATABASE_URL_FORMS = 'sqlite:<file>, sqlite::memory: or postgres://user:pass@host:5432/db';

export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The setting names, as environment variables; CLI flags are their kebab-case forms. */
export type Settings = Partial<Record<
  | 'PORT' | 'HOST' | 'DATABASE_URL' | 'ADMIN_TOKEN' | 'MQTT_PORT' | 'MQTT_URL' | 'MQTT_DEPLOYMENT' | 'REGION' | 'PHASE' | 'DOMAIN'
  | 'LOG_LEVEL' | 'RATE_LIMIT_PER_SECOND' | 'RATE_LIMIT_BURST' | 'CONTROL_TIMEOUT_MS' | 'EVENT_SUBSCRIPTION_LIMIT'
  | 'SIM_TIME_SCALE' | 'DELIVERY_RETRY_SCHEDULE' | 'DELIVERY_ATTEMPT_TIMEOUT_MS' | 'DELIVERY_ALLOW_LIST'
  | 'MESSAGE_RETENTION' | 'ACCESS_TOKEN_TTL' | 'PUBLIC_URL',
  string | undefined
>>;

/** A setting that cannot be used: the CLI prints its one-line message and exits 2. */
export class ConfigError extends Error {}

function integer(name: string, raw: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined || raw === '') return fallback;
  // Digits only: Number() reads " " as 0 (RATE_LIMIT_PER_SECOND=" " would turn the limit off), and takes hex and exponents.
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`}; got "${raw}"`);
  }
  return value;
}

/** Node's timers hold at most 2^31 - 1 ms (24.8 days); a longer one fires after 1 ms, so a timeout past it would end every wait at once. */
const MAX_TIMER_MS = 2_147_483_647;

function port(name: string, raw: string | undefined, fallback: number): number {
  return integer(name, raw, fallback, 0, 65_535);
}

/** The simulator's speed, in its own range: refused here, a mistake stops the start in one line. */
function timeScale(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!isTimeScale(value)) throw new ConfigError(`SIM_TIME_SCALE must be ${TIME_SCALE_RANGE}; got "${raw}"`);
  return value;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toUpperCase() as T;
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got "${raw}"`);
  return value;
}

function logLevel(raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw === '') return fallback;
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${raw}"`);
  return raw;
}

/**
 * Never echo a password that a URL may carry: everything between `//` and the last `@`, so that a
 * password with an unencoded `/` or `@` (a URL that does not parse, and so is echoed) is hidden too,
 * and a `password` parameter of its query, which the pg driver takes as well.
 */
export function redactDatabaseUrl(databaseUrl: string): string {
  return databaseUrl.replace(/\/\/.*@/, '//***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** The file a `sqlite:` DATABASE_URL names (`sqlite:///abs/path` and `sqlite:relative/path` alike); null for memory or another database. */
export function sqliteFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:') || databaseUrl === 'sqlite::memory:') return null;
  return databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
}

/** The form of a DATABASE_URL; whether its database can be reached is known only when the store opens it. */
function databaseUrl(raw: string): string {
  const refuse = (why: string) => new ConfigError(`DATABASE_URL must be ${DATABASE_URL_FORMS}; got "${redactDatabaseUrl(raw)}"${why}`);
  if (raw.startsWith('sqlite:')) {
    if (raw === 'sqlite:' || raw === 'sqlite://') throw refuse(' (no file path)');
    return raw;
  }
  if (!/^postgres(ql)?:\/\//.test(raw)) throw refuse('');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(' (not a URL)');
  }
  for (const name of ['pool_max', 'connect_timeout']) {
    const value = url.searchParams.get(name);
    if (value !== null && !/^[1-9]\d*$/.test(value)) throw new ConfigError(`DATABASE_URL ${name} must be a positive integer; got "${value}"`);
  }
  return raw;
}

/** Parses a setting with a parser of its own module, so that a bad value stops the start before anything opens. */
function checked(name: string, raw: string, parse: (raw: string) => unknown): string {
  try {
    parse(raw);
  } catch (error) {
    throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return raw;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function publicUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL; got "${raw}"`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL without query or fragment; got "${raw}"`);
  }
  return url.href.replace(/\/$/, '');
}

/** The domain of the base URL (DESIGN A.1): a host name, and a port if one is meant, as the URL is built from it. */
function domain(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'appliance-cloud.example';
  const host = `kic-ext.${raw}`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(`https://${host}`);
  } catch {
    parsed = undefined;
  }
  if (parsed?.host !== host.toLowerCase()) {
    throw new ConfigError(`DOMAIN must be a domain name such as appliance-cloud.example (no scheme, path or spaces); got "${raw}"`);
  }
  return raw;
}

/** The schemes mqtt.js connects over from Node. */
const MQTT_URL_SCHEMES = ['mqtt:', 'mqtts:', 'tcp:', 'tls:', 'ssl:', 'ws:', 'wss:'];

/** Whether `raw` is a broker URL mqtt.js can connect to: one of its schemes and a host. */
export function isMqttUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return MQTT_URL_SCHEMES.includes(url.protocol) && url.hostname !== '';
}

/** An external broker's URL, checked here so that a typo stops the start in one line instead of a connect's stack trace. */
function mqttUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!isMqttUrl(raw)) {
    throw new ConfigError(`MQTT_URL must be mqtt://, mqtts://, ws:// or wss:// and a host, as in mqtt://user:pass@broker:1883; got "${redactDatabaseUrl(raw)}"`);
  }
  return raw;
}

/** Part of an MQTT client id: letters, digits, `-` and `_`, as every broker takes them. */
function mqttDeployment(raw: string | undefined): string {
  const name = raw || 'appliance-cloud';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new ConfigError(`MQTT_DEPLOYMENT must be 1 to 64 letters, digits, - or _; got "${name}"`);
  return name;
}

/**
 * What a deployment may run with but should not, for the log at start. Warned, not refused: DESIGN E
 * asks of `serve` only that ADMIN_TOKEN be set.
 */
export function configWarnings(config: Pick<Config, 'phase' | 'adminToken'>): string[] {
  const warnings: string[] = [];
  const token = config.adminToken;
  if (config.phase === 'OP' && token !== null && token.length < MIN_ADMIN_TOKEN_LENGTH) {
    warnings.push(
      `ADMIN_TOKEN has ${token.length} characters: it alone guards /admin, /metrics and the console, and guesses at it are not throttled; ` +
        `use at least ${MIN_ADMIN_TOKEN_LENGTH} (openssl rand -hex 32)`,
    );
  }
  return warnings;
}

/** Reads the settings for `mode`, checking every one; `settings` is usually `process.env` merged with CLI flags. */
export function loadConfig(mode: Mode, settings: Settings): Config {
  const sandbox = mode === 'sandbox';
  const adminToken = settings.ADMIN_TOKEN || null;
  if (mode === 'serve' && !adminToken) throw new ConfigError('ADMIN_TOKEN is required by `serve`');
  // A token read from a file often ends in a line break; no Authorization header can carry it, so every admin call would be refused.
  if (adminToken !== null && /\s/.test(adminToken)) {
    throw new ConfigError('ADMIN_TOKEN must have no spaces or line breaks (a file read into it often ends in one): no Authorization header could carry it');
  }
  const phase = oneOf('PHASE', settings.PHASE, PHASES, mode === 'serve' ? 'OP' : 'QA');
  const deliveryAllowList = list(settings.DELIVERY_ALLOW_LIST);
  checked('DELIVERY_ALLOW_LIST', settings.DELIVERY_ALLOW_LIST ?? '', () => createAddressGuard({ phase, allowList: deliveryAllowList }));
  return {
    mode,
    port: port('PORT', settings.PORT, 8080),
    host: settings.HOST || (sandbox ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl: databaseUrl(settings.DATABASE_URL || (mode === 'test' ? 'sqlite::memory:' : 'sqlite:./data/appliance-cloud.db')),
    adminToken,
    mqttPort: port('MQTT_PORT', settings.MQTT_PORT, mode === 'test' ? 0 : 1883),
    mqttUrl: mqttUrl(settings.MQTT_URL),
    mqttDeployment: mqttDeployment(settings.MQTT_DEPLOYMENT),
    region: oneOf('REGION', settings.REGION, REGIONS, 'KIC'),
    phase,
    domain: domain(settings.DOMAIN),
    logLevel: logLevel(settings.LOG_LEVEL, mode === 'test' ? 'silent' : 'info'),
    rateLimitPerSecond: integer('RATE_LIMIT_PER_SECOND', settings.RATE_LIMIT_PER_SECOND, 1000),
    rateLimitBurst: integer('RATE_LIMIT_BURST', settings.RATE_LIMIT_BURST, 2000, 1),
    controlTimeoutMs: integer('CONTROL_TIMEOUT_MS', settings.CONTROL_TIMEOUT_MS, 10_000, 1, MAX_TIMER_MS),
    eventSubscriptionLimit: integer('EVENT_SUBSCRIPTION_LIMIT', settings.EVENT_SUBSCRIPTION_LIMIT, 100, 1),
    virtualByDefault: sandbox,
    simTimeScale: timeScale(settings.SIM_TIME_SCALE, sandbox ? 10 : 1),
    simTimeScaleSet: Boolean(settings.SIM_TIME_SCALE),
    deliveryRetrySchedule: checked('DELIVERY_RETRY_SCHEDULE', settings.DELIVERY_RETRY_SCHEDULE || (sandbox ? '1s,5s,30s,2m,5m' : '5s,5m,30m,2h,5h,10h,10h'), parseRetrySchedule),
    deliveryAttemptTimeoutMs: integer('DELIVERY_ATTEMPT_TIMEOUT_MS', settings.DELIVERY_ATTEMPT_TIMEOUT_MS, 10_000, 1, MAX_TIMER_MS),
    deliveryAllowList,
    messageRetention: checked('MESSAGE_RETENTION', settings.MESSAGE_RETENTION || '7d', parseRetention),
    accessTokenTtlSeconds: integer('ACCESS_TOKEN_TTL', settings.ACCESS_TOKEN_TTL, 3600, 1),
    publicUrl: publicUrl(settings.PUBLIC_URL),
    version: PACKAGE_VERSION,
  };
}

/**
 * The settings by which a server judges what the admin CLI also writes (callback URLs, a user's
 * country), recorded in its database at start under DEPLOYMENT_RECORD: an `admin` command not given
 * one judges as the server of its database does, not by the sandbox's defaults.
 */
const DEPLOYMENT_SETTINGS = ['REGION', 'PHASE', 'DELIVERY_ALLOW_LIST'] as const satisfies readonly (keyof Settings)[];
export const DEPLOYMENT_RECORD = 'deployment-settings';

/** What a server records of its settings (the JSON of DEPLOYMENT_SETTINGS as it resolved them). */
export function deploymentRecord(config: Config): string {
  return JSON.stringify({ REGION: config.region, PHASE: config.phase, DELIVERY_ALLOW_LIST: config.deliveryAllowList.join(',') });
}

/** `settings`, with those of DEPLOYMENT_SETTINGS it leaves out taken from a server's record (null: none recorded). */
export function withDeploymentRecord(settings: Settings, record: string | null): Settings {
  let recorded: unknown;
  try {
    recorded = record === null ? null : JSON.parse(record);
  } catch {
    return settings;
  }
  if (typeof recorded !== 'object' || recorded === null) return settings;
  const filled: Settings = { ...settings };
  for (const name of DEPLOYMENT_SETTINGS) {
    const value = (recorded as Record<string, unknown>)[name];
    if ((filled[name] === undefined || filled[name] === '') && typeof value === 'string') filled[name] = value;
  }
  return filled;
}

/** The public base URL of DESIGN A.1: `https://{region}-qa-ext.{domain}` in QA, `https://{region}-ext.{domain}` in OP. */
export function baseUrl(config: Pick<Config, 'region' | 'phase' | 'domain'>): string {
  const region = config.region.toLowerCase();
  return config.phase === 'QA' ? `https://${region}-qa-ext.${config.domain}` : `https://${region}-ext.${config.domain}`;
}
