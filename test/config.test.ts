import { describe, expect, it } from 'vitest';
import { baseUrl, ConfigError, configWarnings, loadConfig, MIN_ADMIN_TOKEN_LENGTH } from '../src/config.js';

describe('settings', () => {
  it('serve needs ADMIN_TOKEN and defaults to phase OP', () => {
    expect(() => loadConfig('serve', {})).toThrow(ConfigError);
    expect(loadConfig('serve', { ADMIN_TOKEN: 't' }).phase).toBe('OP');
  });

  it('warns in phase OP of an admin token shorter than 32 characters, its only defence against guessing; QA takes any', () => {
    const short = 'a'.repeat(MIN_ADMIN_TOKEN_LENGTH - 1);
    expect(configWarnings(loadConfig('serve', { ADMIN_TOKEN: short }))).toEqual([
      'ADMIN_TOKEN has 31 characters: it alone guards /admin, /metrics and the console, and guesses at it are not throttled; use at least 32 (openssl rand -hex 32)',
    ]);
    expect(configWarnings(loadConfig('sandbox', { ADMIN_TOKEN: short, PHASE: 'OP' }))).toHaveLength(1);
    expect(configWarnings(loadConfig('serve', { ADMIN_TOKEN: `${short}a` }))).toEqual([]);
    expect(configWarnings(loadConfig('serve', { ADMIN_TOKEN: 't', PHASE: 'QA' }))).toEqual([]);
    expect(configWarnings(loadConfig('sandbox', {}))).toEqual([]);
  });

  it('refuses an ADMIN_TOKEN with a space or line break, which no Authorization header could carry', () => {
    for (const token of ['secret-token\n', 'secret token'])
      expect(() => loadConfig('serve', { ADMIN_TOKEN: token })).toThrow('ADMIN_TOKEN must have no spaces or line breaks');
  });

  it('takes integer settings as digits only: a blank is no 0, hex and exponents are refused', () => {
    for (const raw of [' ', '0x1F90', '1e2', '+80', '80 '])
      expect(() => loadConfig('test', { PORT: raw })).toThrow(`PORT must be an integer from 0 to 65535; got "${raw}"`);
    expect(() => loadConfig('test', { RATE_LIMIT_PER_SECOND: ' ' })).toThrow('RATE_LIMIT_PER_SECOND must be an integer');
    expect(loadConfig('test', { PORT: '8081' }).port).toBe(8081);
  });

  it('hides the whole password of a URL it cannot parse, even one with an unencoded / or @', () => {
    expect(() => loadConfig('test', { DATABASE_URL: 'postgres://app:s3cr/et@db:5432/x' })).toThrow('got "postgres://***@db:5432/x"');
    expect(() => loadConfig('test', { MQTT_URL: 'http://app:p@ss/w@rd@broker:1883' })).toThrow('got "http://***@broker:1883"');
  });

  it('the sandbox runs in phase QA with virtual devices by default', () => {
    const config = loadConfig('sandbox', {});
    expect([config.phase, config.virtualByDefault, config.databaseUrl]).toEqual(['QA', true, 'sqlite:./data/appliance-cloud.db']);
  });

  it('refuses malformed values with the setting named', () => {
    expect(() => loadConfig('test', { PORT: 'eighty' })).toThrow('PORT must be an integer from 0 to 65535; got "eighty"');
    expect(() => loadConfig('test', { LOG_LEVEL: 'verbose' })).toThrow('LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "verbose"');
    expect(() => loadConfig('test', { DATABASE_URL: 'postgres://u:p@db.example:port/app' })).toThrow(
      'DATABASE_URL must be sqlite:<file>, sqlite::memory: or postgres://user:pass@host:5432/db; got "postgres://***@db.example:port/app" (not a URL)',
    );
    expect(() => loadConfig('test', { DATABASE_URL: 'postgres://db.example/app?pool_max=lots' })).toThrow('DATABASE_URL pool_max must be a positive integer; got "lots"');
    expect(() => loadConfig('test', { MESSAGE_RETENTION: 'forever' })).toThrow('MESSAGE_RETENTION: "forever" is not a duration');
    expect(() => loadConfig('test', { DELIVERY_ALLOW_LIST: '10.0.0.0/99' })).toThrow('DELIVERY_ALLOW_LIST: allow-list entry "10.0.0.0/99"');
    expect(() => loadConfig('test', { REGION: 'MARS' })).toThrow('REGION must be one of KIC, EIC, AIC; got "MARS"');
    expect(() => loadConfig('test', { MQTT_DEPLOYMENT: 'prod/eu' })).toThrow('MQTT_DEPLOYMENT must be 1 to 64 letters, digits, - or _; got "prod/eu"');
    expect(() => loadConfig('test', { MQTT_URL: 'http://u:secret@broker.example:1883' })).toThrow(
      'MQTT_URL must be mqtt://, mqtts://, ws:// or wss:// and a host, as in mqtt://user:pass@broker:1883; got "http://***@broker.example:1883"',
    );
    expect(() => loadConfig('test', { MQTT_URL: 'broker.example:1883' })).toThrow('MQTT_URL must be');
    for (const domain of ['https://partner.example', 'example.com/api', 'my domain.example']) {
      expect(() => loadConfig('test', { DOMAIN: domain })).toThrow(`DOMAIN must be a domain name such as appliance-cloud.example (no scheme, path or spaces); got "${domain}"`);
    }
    // Past Node's timer limit a timeout fires after 1 ms: every control and every webhook attempt would time out at once.
    for (const name of ['CONTROL_TIMEOUT_MS', 'DELIVERY_ATTEMPT_TIMEOUT_MS'] as const) {
      expect(() => loadConfig('test', { [name]: '3000000000' })).toThrow(`${name} must be an integer from 1 to 2147483647; got "3000000000"`);
      expect(loadConfig('test', { [name]: '2147483647' })).toMatchObject({ [name === 'CONTROL_TIMEOUT_MS' ? 'controlTimeoutMs' : 'deliveryAttemptTimeoutMs']: 2_147_483_647 });
    }
    // The simulator's own range, refused as a setting (exit 2) rather than when the simulator starts.
    for (const scale of ['0.00001', '100000', 'fast']) {
      expect(() => loadConfig('test', { SIM_TIME_SCALE: scale })).toThrow(`SIM_TIME_SCALE must be a number from 0.01 to 10000 (1 = real time); got "${scale}"`);
    }
    expect(loadConfig('test', { DOMAIN: 'Example.com:8443' }).domain).toBe('Example.com:8443');
    expect(loadConfig('test', { MQTT_URL: 'mqtts://u:p@broker.example:8883' }).mqttUrl).toBe('mqtts://u:p@broker.example:8883');
  });

  it('builds the base URL of DESIGN A.1', () => {
    expect(baseUrl({ region: 'EIC', phase: 'QA', domain: 'example.com' })).toBe('https://eic-qa-ext.example.com');
    expect(baseUrl({ region: 'AIC', phase: 'OP', domain: 'example.com' })).toBe('https://aic-ext.example.com');
  });
});
