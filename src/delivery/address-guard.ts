/**
 * The SSRF guard of DESIGN C. Names are checked where they are resolved, at connect time, so a
 * name that rebinds to an internal address after registration is still refused; IP literals never
 * reach a resolver, so the URL check covers them. An IPv6 address that carries an IPv4 one is
 * judged by the IPv4 inside (DESIGN J): that is where a translator or tunnel would deliver it.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type Phase = 'QA' | 'OP';

export interface GuardSettings {
  phase: Phase;
  /** Operator-trusted exact host names, IP addresses and CIDRs, allowed whatever they resolve to. */
  allowList: readonly string[];
}

export type UrlCheck = { ok: true } | { ok: false; reason: string };

export interface AddressGuard {
  checkUrl(url: string): UrlCheck;
  /**
   * `checkUrl` for a URL being set, which also refuses what every lookup of its name would:
   * localhost and its subdomains, loopback by definition (RFC 6761).
   */
  checkSetting(url: string): UrlCheck;
  /** For undici's `connect: { lookup }`: resolves like dns.lookup and drops refused addresses. */
  lookup: LookupFunction;
}

/** Raised (as a connect error) when every address of a callback host is refused. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_CALLBACK_ADDRESS_REFUSED';
}

/**
 * Ranges no callback may reach, the first that holds an address naming it. QA lets developers use
 * loopback and private networks (their laptop, a docker network) but no phase allows a cloud's
 * metadata service (169.254.169.254 is link-local; AWS's IPv6 one and Alibaba's sit inside ranges QA
 * allows, so they come first), unspecified, multicast or reserved space, where no webhook receiver lives.
 */
const REFUSED_RANGES: readonly { cidr: string; kind: string; inQa: boolean }[] = [
  { cidr: '100.100.100.200/32', kind: 'cloud metadata', inQa: true },
  { cidr: 'fd00:ec2::254/128', kind: 'cloud metadata', inQa: true },
  { cidr: '0.0.0.0/8', kind: 'unspecified', inQa: true },
  { cidr: '10.0.0.0/8', kind: 'private', inQa: false },
  { cidr: '100.64.0.0/10', kind: 'shared (CGNAT)', inQa: false },
  { cidr: '127.0.0.0/8', kind: 'loopback', inQa: false },
  { cidr: '169.254.0.0/16', kind: 'link-local (cloud metadata)', inQa: true },
  { cidr: '172.16.0.0/12', kind: 'private', inQa: false },
  { cidr: '192.168.0.0/16', kind: 'private', inQa: false },
  { cidr: '224.0.0.0/4', kind: 'multicast', inQa: true },
  { cidr: '240.0.0.0/4', kind: 'reserved', inQa: true },
  { cidr: '::/128', kind: 'unspecified', inQa: true },
  { cidr: '::1/128', kind: 'loopback', inQa: false },
  { cidr: 'fc00::/7', kind: 'private (unique local)', inQa: false },
  { cidr: 'fe80::/10', kind: 'link-local', inQa: true },
  { cidr: 'fec0::/10', kind: 'site-local', inQa: false },
  { cidr: 'ff00::/8', kind: 'multicast', inQa: true },
];

const RULES = REFUSED_RANGES.map((range) => ({ ...range, list: blockListOf([range.cidr]) }));
const LOOPBACK = blockListOf(REFUSED_RANGES.filter((range) => range.kind === 'loopback').map((range) => range.cidr));

/** IPv6 forms that carry an IPv4 address: the 16-bit groups they start with, and where the IPv4 sits. */
const EMBEDDINGS: readonly { prefix: readonly number[]; at: number }[] = [
  { prefix: [0, 0, 0, 0, 0, 0xffff], at: 6 }, // ::ffff:a.b.c.d, IPv4-mapped
  { prefix: [0, 0, 0, 0, 0xffff, 0], at: 6 }, // ::ffff:0:a.b.c.d, IPv4-translated
  { prefix: [0x64, 0xff9b, 0, 0, 0, 0], at: 6 }, // 64:ff9b::/96, NAT64
  { prefix: [0x2002], at: 1 }, // 2002::/16, 6to4
  { prefix: [0, 0, 0, 0, 0, 0], at: 6 }, // ::a.b.c.d, IPv4-compatible
];

/** Why an address is refused: its kind, and the IPv4 address inside it that was judged, if any. */
interface Refusal {
  kind: string;
  inside: string | undefined;
}

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** A guard for one phase and allow-list; throws at once on a malformed allow-list entry. */
export function createAddressGuard({ phase, allowList }: GuardSettings): AddressGuard {
  const allowedHosts = new Set(allowList.filter((entry) => isHostName(entry)).map(bareHost));
  const allowedAddresses = blockListOf(allowList.filter((entry) => !isHostName(entry)));
  const allowed = (address: string): boolean => allowedAddresses.check(address, family(address));
  const refusal = (address: string): Refusal | undefined => {
    const inside = embeddedIpv4(address);
    if (allowed(address) || (inside !== undefined && allowed(inside))) return undefined;
    const kind = refusedKind(inside ?? address, phase);
    return kind === undefined ? undefined : { kind, inside };
  };

  const checkUrl = (url: string): UrlCheck => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, reason: 'not a valid absolute URL' };
    }
    const schemes = phase === 'OP' ? ['https:'] : ['http:', 'https:'];
    if (!schemes.includes(parsed.protocol)) {
      return { ok: false, reason: `phase ${phase} accepts only ${schemes.join(' or ')} callback URLs` };
    }
    const host = bareHost(parsed.hostname);
    const refused = isIP(host) ? refusal(host) : undefined;
    if (!refused) return { ok: true };
    const inside = refused.inside === undefined ? '' : ` (${refused.inside} inside)`;
    return { ok: false, reason: `${host} is ${/^[aeiou]/.test(refused.kind) ? 'an' : 'a'} ${refused.kind} address${inside}, refused in phase ${phase}` };
  };

  return {
    checkUrl,

    checkSetting(url) {
      const check = checkUrl(url);
      const parsed = check.ok ? new URL(url) : undefined;
      // The sender sends no userinfo (undici drops it): the receiver would never see them, and every
      // listing of the service would show them. A receiver checks the signature instead.
      if (parsed && (parsed.username || parsed.password)) {
        return { ok: false, reason: 'credentials in the URL (user:password@) are never sent; a receiver checks the webhook signature instead' };
      }
      const host = parsed ? bareHost(parsed.hostname) : '';
      if (isLocalhostName(host) && !allowedHosts.has(host) && refusal('127.0.0.1')) {
        return { ok: false, reason: `${host} is a loopback name (RFC 6761), refused in phase ${phase}` };
      }
      return check;
    },

    lookup(hostname, options, callback) {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const trusted = allowedHosts.has(bareHost(hostname));
        const permitted = trusted ? addresses : addresses.filter(({ address }) => !refusal(address));
        const [first] = permitted;
        if (!first) {
          const refused = addresses.map(({ address }) => `${address} (${describe(refusal(address))})`).join(', ');
          return callback(new AddressRefusedError(`callback host ${hostname} resolves to ${refused}, refused in phase ${phase}`), []);
        }
        if (options.all) callback(null, permitted);
        else callback(null, first.address, first.family);
      });
    },
  };
}

/** One-off check of a callback URL being set (a service registers it): its scheme, literal address and loopback names. */
export function checkCallbackUrl(url: string, settings: GuardSettings): UrlCheck {
  return createAddressGuard(settings).checkSetting(url);
}

function describe(refusal: Refusal | undefined): string {
  if (!refusal) return 'not refused';
  return refusal.inside === undefined ? refusal.kind : `${refusal.kind}, ${refusal.inside} inside`;
}

/**
 * The IPv4 address an IPv6 one carries, or undefined (also for an IPv4 address). `::` and `::1`
 * keep their own IPv6 meaning rather than read as 0.0.0.0 and 0.0.0.1.
 */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 7).every((g) => g === 0) && (groups[7] ?? 0) <= 1) return undefined;
  const form = EMBEDDINGS.find(({ prefix }) => prefix.every((g, i) => groups[i] === g));
  if (!form) return undefined;
  const [high = 0, low = 0] = groups.slice(form.at, form.at + 2);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit groups of a valid IPv6 address, a trailing dotted quad and `::` expanded, any zone dropped. */
function ipv6Groups(address: string): number[] {
  const [text = ''] = address.split('%');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const [a = 0, b = 0, c = 0, d = 0] = quad ? quad.slice(1).map(Number) : [];
  const hex = quad ? `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}` : text;
  const [head = '', tail] = hex.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function refusedKind(address: string, phase: Phase): string | undefined {
  const type = family(address);
  return RULES.find((rule) => (phase === 'OP' || rule.inQa) && rule.list.check(address, type))?.kind;
}

/** A BlockList of IP addresses and CIDRs; a malformed entry is a configuration error. */
function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits, extra] = bareHost(entry).split('/');
    const type = family(address);
    const max = type === 'ipv4' ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (!isIP(address) || extra !== undefined || !/^\d+$/.test(bits ?? '0') || prefix > max) {
      throw new Error(`allow-list entry "${entry}" is not a host name, an IP address or a CIDR`);
    }
    list.addSubnet(address, prefix, type);
  }
  return list;
}

function isHostName(entry: string): boolean {
  const host = bareHost(entry);
  return isIP(host) === 0 && HOST_NAME.test(host);
}

/**
 * Whether a URL's host is this machine: a loopback address (an IPv4 one inside an IPv6 form too), or
 * localhost and its subdomains, loopback by definition (RFC 6761).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (isLocalhostName(host)) return true;
  if (!isIP(host)) return false;
  const address = embeddedIpv4(host) ?? host;
  return LOOPBACK.check(address, family(address));
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Lower-case, without IPv6 brackets or the root's trailing dot, as hosts are compared. */
function bareHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}
