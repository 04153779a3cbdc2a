/**
 * The chaos load: per device, one actor publishing MQTT reports and one calling HTTP, each one
 * request after another (so that a source's reports reach the cloud in the order of their counters),
 * to any node that is up, as a load balancer without sticky sessions would. Every acknowledged report
 * is recorded with its counter; a share of requests is invalid input, which must be refused with an
 * envelope and change nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { newMessageId } from '../../src/ids.js';
import { call } from '../../test/cluster/nodes.js';
import type { Accepted, Change, Source } from './accounting.js';
import type { ChaosDevice } from './device.js';

export interface LoadWorld {
  adminToken: string;
  /** The partner's credentials headers (without x-message-id). */
  partnerHeaders: Record<string, string>;
}

export interface LoadSettings {
  /** Pause of each device between two MQTT reports. */
  reportIntervalMs: number;
  /** Pause of each device's HTTP actor between two calls. */
  httpIntervalMs: number;
  /** Share of requests and publishes that are invalid input. */
  fuzzRate: number;
}

export interface FuzzFigures {
  /** Invalid HTTP requests that got an answer. */
  requests: number;
  /** Invalid MQTT publishes. */
  publishes: number;
  /** Invalid requests answered 2xx: accepted. */
  accepted: number;
  /** Answers that are not the envelope `{messageId, timestamp, error: {code, message}}`. */
  notEnvelope: number;
  /** Answered 500 with code 2000 (expected only while the database is down). */
  internalErrors: number;
}

const WIND_STRENGTHS = ['TURBO', 'HIGH', 'LOW', 'MID'];

/** Invalid bodies for both a device report (`POST /admin/devices/{id}/report`) and a partner control. */
const INVALID_BODIES = [
  { contentType: 'application/json', body: '{"airFlow":{"windStrength":"WARP"}}' },
  { contentType: 'application/json', body: '{"airFlow":{"windStrength":7}}' },
  { contentType: 'application/json', body: '{"chaos":' },
  { contentType: 'application/json', body: '[]' },
  { contentType: 'application/json', body: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}` },
  { contentType: 'text/plain', body: '{"airFlow":{"windStrength":"LOW"}}' },
  { contentType: 'application/json', body: `{"airFlow":{"windStrength":"${'x'.repeat(70_000)}"}}` },
];

/** What must be refused: a report may carry undeclared properties, a control may not. */
const FUZZ_REQUESTS: { kind: 'admin' | 'partner'; contentType: string; body: string }[] = [
  ...INVALID_BODIES.map((request) => ({ kind: 'admin' as const, ...request })),
  ...INVALID_BODIES.map((request) => ({ kind: 'partner' as const, ...request })),
  { kind: 'partner', contentType: 'application/json', body: '{"__proto__":{"polluted":true}}' },
  { kind: 'partner', contentType: 'application/json', body: '{"chaos":{"control":0}}' },
  { kind: 'partner', contentType: 'application/json', body: '{}' },
];

/** Invalid reports over MQTT: each is acknowledged, refused by the profile or the parser, and stored nowhere. */
const FUZZ_PUBLISHES = ['{"airFlow":{"windStrength":"WARP"}}', 'not json', '[1]', `${'['.repeat(100)}${']'.repeat(100)}`, '{"airFlow":7}'];

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

export class Load {
  /** Final once `stop()` has resolved. */
  readonly accepted: Accepted[] = [];
  /** Reports not acknowledged, by source and error code (or `no answer`). */
  readonly refused = new Map<string, number>();
  readonly fuzz: FuzzFigures = { requests: 0, publishes: 0, accepted: 0, notEnvelope: 0, internalErrors: 0 };
  #running = true;
  #recording = true;
  readonly #actors: Promise<void>[] = [];

  constructor(
    private readonly world: LoadWorld,
    private readonly settings: LoadSettings,
    /** The URL of a node that is up, or undefined while none is. */
    private readonly pickNode: () => string | undefined,
    /** When the run started, epoch ms. */
    private readonly started: number,
  ) {}

  start(devices: readonly ChaosDevice[]): void {
    for (const device of devices) this.#actors.push(this.#publishing(device), this.#calling(device.deviceId));
  }

  /** Stops sending; waits up to `graceMs` for what is in flight, then records no more. */
  async stop(graceMs: number): Promise<void> {
    this.#running = false;
    await Promise.race([Promise.all(this.#actors), sleep(graceMs)]);
    this.#recording = false;
  }

  #now(): number {
    return Date.now() - this.started;
  }

  #accept(deviceId: string, change: Change, sentAt: number): void {
    if (this.#recording) this.accepted.push({ deviceId, ...change, sentAt, at: this.#now() });
  }

  #refuse(source: Source, why: string): void {
    if (!this.#recording) return;
    const key = `${source} ${why}`;
    this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
  }

  async #publishing(device: ChaosDevice): Promise<void> {
    let n = 0;
    while (this.#running) {
      if (Math.random() < this.settings.fuzzRate) {
        this.fuzz.publishes++;
        await device.report(pick(FUZZ_PUBLISHES)).catch(() => undefined);
      } else {
        const change: Change = { source: 'mqtt', n: ++n };
        const sentAt = this.#now();
        await device.report(JSON.stringify({ chaos: { mqtt: change.n } })).then(
          () => this.#accept(device.deviceId, change, sentAt),
          () => this.#refuse('mqtt', 'no PUBACK'),
        );
      }
      await sleep(this.settings.reportIntervalMs);
    }
  }

  async #calling(deviceId: string): Promise<void> {
    let n = 0;
    while (this.#running) {
      const url = this.pickNode();
      if (url === undefined) {
        await sleep(100);
        continue;
      }
      if (Math.random() < this.settings.fuzzRate) await this.#fuzzRequest(url, deviceId);
      else if (Math.random() < 0.5) await this.#adminReport(url, deviceId, ++n);
      else await this.#control(url, deviceId);
      await sleep(this.settings.httpIntervalMs);
    }
  }

  async #adminReport(url: string, deviceId: string, n: number): Promise<void> {
    const sentAt = this.#now();
    const answer = await call(url, 'POST', `/admin/devices/${deviceId}/report`, this.#adminHeaders(), { chaos: { admin: n } }).catch(() => undefined);
    if (answer?.status === 200) this.#accept(deviceId, { source: 'admin', n }, sentAt);
    else this.#refuse('admin', answer?.body.error?.code ?? 'no answer');
  }

  /** The device answers with its next control counter, which the 200's full status carries. */
  async #control(url: string, deviceId: string): Promise<void> {
    const sentAt = this.#now();
    const answer = await call(url, 'POST', `/devices/${deviceId}`, this.world.partnerHeaders, { airFlow: { windStrength: pick(WIND_STRENGTHS) } }).catch(() => undefined);
    if (answer?.status !== 200) return this.#refuse('control', answer?.body.error?.code ?? 'no answer');
    const n = (answer.body.response as { chaos?: { control?: unknown } } | undefined)?.chaos?.control;
    if (typeof n === 'number') this.#accept(deviceId, { source: 'control', n }, sentAt);
    else this.#refuse('control', '200 without the device counter');
  }

  async #fuzzRequest(url: string, deviceId: string): Promise<void> {
    const request = pick(FUZZ_REQUESTS);
    const [path, headers] = request.kind === 'admin' ? [`/admin/devices/${deviceId}/report`, this.#adminHeaders()] : [`/devices/${deviceId}`, this.world.partnerHeaders];
    const answer = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'x-message-id': newMessageId(), 'content-type': request.contentType },
      body: request.body,
      signal: AbortSignal.timeout(20_000),
    }).then(
      async (res) => ({ status: res.status, body: await res.text() }),
      () => undefined,
    );
    if (!answer) return;
    this.fuzz.requests++;
    if (answer.status < 300) this.fuzz.accepted++;
    const code = envelopeCode(answer.body);
    if (code === undefined) this.fuzz.notEnvelope++;
    if (code === '2000') this.fuzz.internalErrors++;
  }

  #adminHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.world.adminToken}` };
  }
}

/** The error code of an error envelope, or undefined when the text is not one. */
function envelopeCode(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { messageId?: unknown; timestamp?: unknown; error?: { code?: unknown; message?: unknown } };
    const { messageId, timestamp, error } = body;
    const envelope = typeof messageId === 'string' && typeof timestamp === 'string' && typeof error?.code === 'string' && typeof error.message === 'string';
    return envelope ? (error.code as string) : undefined;
  } catch {
    return undefined;
  }
}
