import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { AddressRefusedError, checkCallbackUrl, createAddressGuard, embeddedIpv4, type GuardSettings } from '../../src/delivery/address-guard.js';

const OP: GuardSettings = { phase: 'OP', allowList: [] };
const QA: GuardSettings = { phase: 'QA', allowList: [] };

/** Runs the guard's lookup as net.connect does, in both its `all` and single-address forms. */
function resolve(settings: GuardSettings, hostname: string, all = true): Promise<LookupAddress[]> {
  const { lookup } = createAddressGuard(settings);
  return new Promise((done, fail) => {
    lookup(hostname, { all }, (error, address, family) => {
      if (error) fail(error);
      else done(typeof address === 'string' ? [{ address, family: family ?? 0 }] : address);
    });
  });
}

describe('checkCallbackUrl', () => {
  it('accepts a public https URL in OP and refuses http', () => {
    expect(checkCallbackUrl('https://hooks.example.com/thinq', OP)).toEqual({ ok: true });
    expect(checkCallbackUrl('http://hooks.example.com/thinq', OP)).toEqual({
      ok: false,
      reason: 'phase OP accepts only https: callback URLs',
    });
  });

  it.each([
    ['https://127.0.0.1:8443/hook', 'loopback'],
    ['https://2130706433/hook', 'loopback'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:a00:1]/hook', 'private'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://172.16.0.1/hook', 'private'],
    ['https://192.168.1.20/hook', 'private'],
    ['https://100.64.0.1/hook', 'CGNAT'],
    ['https://[fd00::1]/hook', 'unique local'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://[::]/hook', 'unspecified'],
    ['https://224.0.0.1/hook', 'multicast'],
    ['https://[ff02::1]/hook', 'multicast'],
  ])('OP refuses %s (%s)', (url, kind) => {
    const result = checkCallbackUrl(url, OP);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(kind);
  });

  it('refuses localhost and its subdomains in OP as the loopback they are (RFC 6761), unless allow-listed', () => {
    for (const host of ['localhost', 'LOCALHOST.', 'hooks.localhost']) {
      expect(checkCallbackUrl(`https://${host}/hook`, OP)).toEqual({ ok: false, reason: `${host.toLowerCase().replace(/\.$/, '')} is a loopback name (RFC 6761), refused in phase OP` });
      expect(checkCallbackUrl(`http://${host}:3000/hook`, QA)).toEqual({ ok: true });
    }
    expect(checkCallbackUrl('https://localhost/hook', { phase: 'OP', allowList: ['localhost'] })).toEqual({ ok: true });
    expect(checkCallbackUrl('https://localhost.example.com/hook', OP)).toEqual({ ok: true });
  });

  it('refuses credentials in the URL, in either phase: they would never be sent', () => {
    const reason = 'credentials in the URL (user:password@) are never sent; a receiver checks the webhook signature instead';
    expect(checkCallbackUrl('https://user:secret@hooks.example.com/thinq', OP)).toEqual({ ok: false, reason });
    expect(checkCallbackUrl('http://token@127.0.0.1:3000/hook', QA)).toEqual({ ok: false, reason });
  });

  it('names the kind of address with its article', () => {
    expect(checkCallbackUrl('https://0.0.0.0/hook', OP)).toEqual({ ok: false, reason: '0.0.0.0 is an unspecified address, refused in phase OP' });
    expect(checkCallbackUrl('https://10.1.2.3/hook', OP)).toEqual({ ok: false, reason: '10.1.2.3 is a private address, refused in phase OP' });
  });

  it('QA allows http, loopback and private networks but never link-local', () => {
    for (const url of ['http://127.0.0.1:3000/hook', 'http://[::1]/hook', 'http://192.168.1.20/hook', 'https://hooks.example.com/']) {
      expect(checkCallbackUrl(url, QA)).toEqual({ ok: true });
    }
    expect(checkCallbackUrl('http://169.254.169.254/', QA)).toMatchObject({ ok: false });
  });

  it('refuses the cloud metadata services inside ranges QA allows, in either phase, in the URL and the lookup', async () => {
    for (const phase of ['QA', 'OP'] as const) {
      expect(checkCallbackUrl('https://100.100.100.200/latest/meta-data', { phase, allowList: [] })).toEqual({
        ok: false,
        reason: `100.100.100.200 is a cloud metadata address, refused in phase ${phase}`,
      });
      expect(checkCallbackUrl('https://[fd00:ec2::254]/latest/meta-data', { phase, allowList: [] })).toMatchObject({ ok: false, reason: expect.stringContaining('cloud metadata') });
    }
    expect(checkCallbackUrl('http://100.100.100.201/', QA)).toEqual({ ok: true });
    await expect(resolve(QA, '100.100.100.200')).rejects.toThrow('(cloud metadata)');
    await expect(resolve(QA, 'fd00:ec2::254')).rejects.toThrow('(cloud metadata)');
  });

  it('refuses what is not an http(s) URL', () => {
    expect(checkCallbackUrl('hooks.example.com/thinq', QA)).toEqual({ ok: false, reason: 'not a valid absolute URL' });
    expect(checkCallbackUrl('ftp://hooks.example.com/', QA)).toMatchObject({ ok: false });
  });

  it('lets the allow-list through, by address or CIDR, and nothing else', () => {
    expect(checkCallbackUrl('https://127.0.0.1:8443/hook', { phase: 'OP', allowList: ['127.0.0.1'] })).toEqual({ ok: true });
    expect(checkCallbackUrl('https://[::1]/hook', { phase: 'OP', allowList: ['[::1]'] })).toEqual({ ok: true });
    const cidr = { phase: 'OP', allowList: ['10.0.0.0/8', 'fd00::/8'] } as const;
    expect(checkCallbackUrl('https://10.9.9.9/hook', cidr)).toEqual({ ok: true });
    expect(checkCallbackUrl('https://[fd12::1]/hook', cidr)).toEqual({ ok: true });
    expect(checkCallbackUrl('https://127.0.0.1/hook', cidr)).toMatchObject({ ok: false });
    expect(checkCallbackUrl('http://10.9.9.9/hook', cidr)).toMatchObject({ ok: false });
  });

  it.each(['10.0.0.0/33', '10.0.0.0/8/1', '10.0.0.0/x', 'not a host!'])('throws on the allow-list entry %j', (entry) => {
    expect(() => createAddressGuard({ phase: 'OP', allowList: [entry] })).toThrow(/allow-list entry/);
  });
});

/** IPv6 forms that carry 127.0.0.1 (DESIGN J), as a URL writes them. */
const LOOPBACK_INSIDE = [
  ['::127.0.0.1', 'IPv4-compatible'],
  ['::7f00:1', 'IPv4-compatible, in hex'],
  ['::ffff:127.0.0.1', 'IPv4-mapped'],
  ['::ffff:0:7f00:1', 'IPv4-translated'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated, dotted'],
  ['64:ff9b::7f00:1', 'NAT64'],
  ['64:ff9b::127.0.0.1', 'NAT64, dotted'],
  ['2002:7f00:0001::', '6to4'],
  ['2002:7f00:1:abcd::5', '6to4 with a subnet and host'],
] as const;

describe('IPv6 forms that embed an IPv4 address are judged by the IPv4 inside (DESIGN J)', () => {
  it.each<[string, string | undefined]>([
    ...LOOPBACK_INSIDE.map(([address]): [string, string] => [address, '127.0.0.1']),
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['2002:0a00:0001::1', '10.0.0.1'],
    ['64:FF9B::5DB8:D70E', '93.184.215.14'],
    ['fe80::1', undefined],
    ['2001:db8::7f00:1', undefined],
    ['::1', undefined],
    ['::', undefined],
    ['127.0.0.1', undefined],
  ])('%s carries %s', (address, inside) => {
    expect(embeddedIpv4(address)).toBe(inside);
  });

  it.each(LOOPBACK_INSIDE)('OP refuses the URL of %s (%s), naming the address inside', (address) => {
    const host = new URL(`https://[${address}]/`).hostname.slice(1, -1);
    expect(checkCallbackUrl(`https://[${address}]/hook`, OP)).toEqual({
      ok: false,
      reason: `${host} is a loopback address (127.0.0.1 inside), refused in phase OP`,
    });
  });

  it.each(LOOPBACK_INSIDE)("OP's lookup refuses %s (%s)", async (address) => {
    const refusal = resolve(OP, address);
    await expect(refusal).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(refusal).rejects.toThrow('(loopback, 127.0.0.1 inside), refused in phase OP');
    await expect(resolve(OP, address, false)).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('refuses private and metadata addresses inside, and passes public ones, in the URL and the lookup', async () => {
    expect(checkCallbackUrl('https://[2002:0a00:0001::1]/hook', OP)).toMatchObject({ ok: false, reason: expect.stringContaining('private address (10.0.0.1 inside)') });
    expect(checkCallbackUrl('https://[::ffff:0:c0a8:114]/hook', OP)).toMatchObject({ ok: false, reason: expect.stringContaining('(192.168.1.20 inside)') });
    // The metadata address is refused in QA too, however it is written.
    expect(checkCallbackUrl('http://[64:ff9b::a9fe:a9fe]/', QA)).toMatchObject({ ok: false, reason: expect.stringContaining('link-local (cloud metadata) address (169.254.169.254 inside)') });
    await expect(resolve(QA, '::169.254.169.254')).rejects.toThrow('(link-local (cloud metadata), 169.254.169.254 inside)');
    for (const address of ['64:ff9b::5db8:d70e', '2002:5db8:d70e::1']) {
      expect(checkCallbackUrl(`https://[${address}]/hook`, OP)).toEqual({ ok: true });
      expect(await resolve(OP, address)).toEqual([{ address, family: 6 }]);
    }
  });

  it('QA allows loopback inside as it allows loopback, and the allow-list passes the address inside', async () => {
    expect(checkCallbackUrl('http://[64:ff9b::7f00:1]/hook', QA)).toEqual({ ok: true });
    const allowed = { phase: 'OP', allowList: ['127.0.0.1'] } as const;
    expect(checkCallbackUrl('https://[2002:7f00:1::]/hook', allowed)).toEqual({ ok: true });
    expect(await resolve(allowed, '::ffff:0:7f00:1')).toEqual([{ address: '::ffff:0:7f00:1', family: 6 }]);
  });
});

describe('the guarded lookup', () => {
  it('refuses in OP a name that resolves to loopback', async () => {
    const refusal = resolve(OP, 'localhost');
    await expect(refusal).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(refusal).rejects.toThrow(/localhost resolves to .*\(loopback\), refused in phase OP/);
    await expect(resolve(OP, 'localhost', false)).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '169.254.169.254', 'fe80::1'])('refuses the address %s in OP', async (address) => {
    await expect(resolve(OP, address)).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('passes a public address, in both callback forms', async () => {
    expect(await resolve(OP, '93.184.215.14')).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(await resolve(OP, '93.184.215.14', false)).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('passes loopback in OP when the host or its address is allow-listed', async () => {
    expect((await resolve({ phase: 'OP', allowList: ['LocalHost'] }, 'localhost')).length).toBeGreaterThan(0);
    const byCidr = await resolve({ phase: 'OP', allowList: ['127.0.0.0/8', '::1'] }, 'localhost');
    expect(byCidr.map(({ address }) => address)).toContain('127.0.0.1');
  });

  it('passes loopback in QA and still refuses the metadata address', async () => {
    expect((await resolve(QA, 'localhost')).length).toBeGreaterThan(0);
    await expect(resolve(QA, '169.254.169.254')).rejects.toThrow(/link-local \(cloud metadata\)\), refused in phase QA/);
  });
});
