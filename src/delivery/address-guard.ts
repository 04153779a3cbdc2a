/**
 * The SSRF guard of DESIGN C. Names are checked where they are resolved, at connect time, so a
 * name that rebinds to an internal address after registration is still refused; IP literals never
 * reach a resolver, so the URL check covers them.
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
  /** For undici's `connect: { lookup }`: resolves like dns.lookup and drops refused addresses. */
  lookup: LookupFunction;
}

/** Raised (as a connect error) when every address of a callback host is refused. */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_CALLBACK_ADDRESS_REFUSED';
}

/**
 * Ranges no callback may reach. QA lets developers use loopback and private networks (their
 * laptop, a docker network) but no phase allows link-local (the cloud metadata address),
 * unspecified, multicast or reserved space, where no webhook receiver lives.
 */
const REFUSED_RANGES: readonly { cidr: string; kind: string; inQa: boolean }[] = [
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

// BlockList also matches IPv4-mapped IPv6 forms (::ffff:127.0.0.1) against the IPv4 rules.
const RULES = REFUSED_RANGES.map((range) => ({ ...range, list: blockListOf([range.cidr]) }));

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** A guard for one phase and allow-list; throws at once on a malformed allow-list entry. */
export function createAddressGuard({ phase, allowList }: GuardSettings): AddressGuard {
  const allowedHosts = new Set(allowList.filter((entry) => isHostName(entry)).map(bareHost));
  const allowedAddresses = blockListOf(allowList.filter((entry) => !isHostName(entry)));
  const refusal = (address: string): string | undefined =>
    allowedAddresses.check(address, family(address)) ? undefined : refusedKind(address, phase);

  return {
    checkUrl(url) {
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
      const kind = isIP(host) ? refusal(host) : undefined;
      return kind ? { ok: false, reason: `${host} is a ${kind} address, refused in phase ${phase}` } : { ok: true };
    },

    lookup(hostname, options, callback) {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const trusted = allowedHosts.has(bareHost(hostname));
        const permitted = trusted ? addresses : addresses.filter(({ address }) => !refusal(address));
        const [first] = permitted;
        if (!first) {
          const refused = addresses.map(({ address }) => `${address} (${refusal(address)})`).join(', ');
          return callback(new AddressRefusedError(`callback host ${hostname} resolves to ${refused}, refused in phase ${phase}`), []);
        }
        if (options.all) callback(null, permitted);
        else callback(null, first.address, first.family);
      });
    },
  };
}

/** One-off check of a callback URL's scheme and literal address, e.g. when a service registers it. */
export function checkCallbackUrl(url: string, settings: GuardSettings): UrlCheck {
  return createAddressGuard(settings).checkUrl(url);
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

/** Lower-case, without IPv6 brackets or the root's trailing dot, as hosts are compared. */
function bareHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}
