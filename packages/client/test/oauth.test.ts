/**
 * The OAuth helpers (DESIGN G): their pure parts, and the wire details (concurrent refreshes,
 * client_secret_basic encoding, polling) against a scripted loopback endpoint. linking.test.ts runs
 * them end to end against the real authorization server.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { oauth } from '@appliance-cloud/client';

const metadata: oauth.AuthorizationServerMetadata = {
  issuer: 'https://kic-qa-ext.appliance-cloud.example',
  authorization_endpoint: 'https://kic-qa-ext.appliance-cloud.example/oauth/authorize',
  token_endpoint: 'https://kic-qa-ext.appliance-cloud.example/oauth/token',
};

describe('PKCE (RFC 7636)', () => {
  it("derives the S256 challenge of the RFC's appendix B", async () => {
    expect(await oauth.pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes a fresh 43-character verifier with its challenge each time', async () => {
    const [a, b] = await Promise.all([oauth.createPkce(), oauth.createPkce()]);
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.challenge).toBe(await oauth.pkceChallenge(a.verifier));
    expect(a.method).toBe('S256');
  });
});

describe('authorizationUrl', () => {
  it('asks for a code with PKCE S256, the scopes space-separated, and keeps the endpoint query', () => {
    const url = new URL(oauth.authorizationUrl({ ...metadata, authorization_endpoint: `${metadata.authorization_endpoint}?ui=compact` }, {
      clientId: 'svc_1',
      redirectUri: 'https://partner.example/callback?x=1',
      scope: ['devices', 'control'],
      state: 'st&te',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    }));
    expect(url.origin + url.pathname).toBe(metadata.authorization_endpoint);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      ui: 'compact',
      response_type: 'code',
      client_id: 'svc_1',
      redirect_uri: 'https://partner.example/callback?x=1',
      scope: 'devices control',
      state: 'st&te',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  });

  it('makes unguessable states', () => {
    expect(oauth.randomState()).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(oauth.randomState()).not.toBe(oauth.randomState());
  });
});

describe('refreshingTokenProvider', () => {
  const client = { clientId: 'svc_1', clientSecret: 'key' };
  const store = (tokens: oauth.TokenSet | null): oauth.TokenStore => ({ load: async () => tokens, save: async () => undefined });

  it('hands out the stored access token while it is valid beyond the skew, without asking the server', async () => {
    const provider = oauth.refreshingTokenProvider({
      metadata: { ...metadata, token_endpoint: 'http://127.0.0.1:1/unreachable' },
      client,
      store: store({ accessToken: 'at_1', tokenType: 'Bearer', expiresAt: 1_000_000 + 61_000, refreshToken: 'rt_1' }),
      now: () => 1_000_000,
    });
    expect(await provider()).toBe('at_1');
  });

  it('refuses clearly when nothing is stored, or the token expired with no refresh token', async () => {
    const none = oauth.refreshingTokenProvider({ metadata, client, store: store(null) });
    await expect(none()).rejects.toMatchObject({ name: 'OAuthError', error: 'invalid_grant' });
    const spent = oauth.refreshingTokenProvider({ metadata, client, store: store({ accessToken: 'at', tokenType: 'Bearer', expiresAt: 0 }) });
    await expect(spent()).rejects.toThrow(/no refresh token/);
  });
});

/** A loopback endpoint answering the scripted JSON answers in turn, recording each form it was sent. */
async function scriptedEndpoint(answers: { status: number; body: object }[]) {
  const forms: Record<string, string>[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    forms.push(Object.fromEntries(new URLSearchParams(body)));
    authorizations.push(request.headers.authorization);
    const answer = answers[Math.min(forms.length - 1, answers.length - 1)]!;
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, forms, authorizations, close: () => server.close() };
}

describe('refreshingTokenProvider on the wire', () => {
  it('refreshes once for concurrent calls, with client_secret_basic, and saves the rotated refresh token', async () => {
    const endpoint = await scriptedEndpoint([{ status: 200, body: { access_token: 'at_2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_2' } }]);
    let stored: oauth.TokenSet = { accessToken: 'at_1', tokenType: 'Bearer', expiresAt: Date.now() - 1000, refreshToken: 'rt_1' };
    // A store that takes its time, as a database would.
    const store: oauth.TokenStore = {
      load: async () => (await new Promise((resolve) => setTimeout(resolve, 20)), stored),
      save: async (tokens) => void (await new Promise((resolve) => setTimeout(resolve, 20)), (stored = tokens)),
    };
    try {
      const provider = oauth.refreshingTokenProvider({
        metadata: { ...metadata, token_endpoint: `${endpoint.url}/oauth/token` },
        client: { clientId: 'svc 1', clientSecret: 'k:ey' },
        store,
      });
      expect(await Promise.all([provider(), provider(), provider()])).toEqual(['at_2', 'at_2', 'at_2']);
      expect(endpoint.forms).toEqual([{ grant_type: 'refresh_token', refresh_token: 'rt_1' }]);
      // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
      expect(endpoint.authorizations).toEqual([`Basic ${Buffer.from('svc+1:k%3Aey').toString('base64')}`]);
      expect(stored.refreshToken).toBe('rt_2');
    } finally {
      endpoint.close();
    }
  });

  it('keeps the refresh token it has when a refresh answers none (RFC 6749 §6: the server may not rotate it)', async () => {
    const endpoint = await scriptedEndpoint([{ status: 200, body: { access_token: 'at_2', token_type: 'Bearer', expires_in: 1 } }]);
    let stored: oauth.TokenSet = { accessToken: 'at_1', tokenType: 'Bearer', expiresAt: Date.now() - 1000, refreshToken: 'rt_1' };
    const store: oauth.TokenStore = { load: async () => stored, save: async (tokens) => void (stored = tokens) };
    try {
      const provider = oauth.refreshingTokenProvider({ metadata: { ...metadata, token_endpoint: `${endpoint.url}/oauth/token` }, client: { clientId: 'svc', clientSecret: 'key' }, store });
      expect(await provider()).toBe('at_2');
      expect(stored).toMatchObject({ accessToken: 'at_2', refreshToken: 'rt_1' });
      // The next refresh still has a token to send.
      expect(await provider()).toBe('at_2');
      expect(endpoint.forms).toEqual([{ grant_type: 'refresh_token', refresh_token: 'rt_1' }, { grant_type: 'refresh_token', refresh_token: 'rt_1' }]);
    } finally {
      endpoint.close();
    }
  });
});

describe('a token endpoint that redirects', () => {
  it('is refused: the refresh token is not sent on to where it points', async () => {
    const elsewhere = await scriptedEndpoint([{ status: 200, body: { access_token: 'at_2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_2' } }]);
    // A 307 keeps the method and the body; fetch strips only the Authorization header on the way to another origin.
    const redirecting = createServer((_request, response) => response.writeHead(307, { location: `${elsewhere.url.replace('127.0.0.1', 'localhost')}/oauth/token` }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const tokenEndpoint = `http://127.0.0.1:${(redirecting.address() as { port: number }).port}/oauth/token`;
      const refreshed = oauth.refreshTokens({ ...metadata, token_endpoint: tokenEndpoint }, { clientId: 'svc_1', clientSecret: 'key' }, 'rt_1');
      await expect(refreshed).rejects.toMatchObject({ name: 'OAuthError', httpStatus: 307 });
      expect(elsewhere.forms).toEqual([]);
    } finally {
      redirecting.close();
      elsewhere.close();
    }
  });
});

describe('an authorization server that does not answer', () => {
  it('is given up on after the client timeoutMs, with the OAuthError timeout, so that calls waiting for a token do not hang', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const tokenEndpoint = `http://127.0.0.1:${(silent.address() as { port: number }).port}/oauth/token`;
      const refreshed = oauth.refreshTokens({ ...metadata, token_endpoint: tokenEndpoint }, { clientId: 'svc_1', clientSecret: 'key', timeoutMs: 200 }, 'rt_1');
      await expect(refreshed).rejects.toMatchObject({ name: 'OAuthError', error: 'timeout', httpStatus: 0, message: `timeout: ${tokenEndpoint} did not answer within 200 ms` });
      await expect(oauth.discover(tokenEndpoint, { timeoutMs: 200 })).rejects.toMatchObject({ name: 'OAuthError', error: 'timeout' });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("stops a device-flow poll when the caller's signal aborts, as its own error", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const served = { ...metadata, token_endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}/oauth/token` };
      const authorization = { deviceCode: 'dc', userCode: 'u', verificationUri: 'v', expiresAt: Date.now() + 60_000, interval: 0 };
      const stop = new AbortController();
      const polling = oauth.pollDeviceToken(served, { clientId: 'svc_1', clientSecret: 'key' }, authorization, { signal: stop.signal });
      setTimeout(() => stop.abort(new Error('the owner closed the page')), 100);
      await expect(polling).rejects.toThrow('the owner closed the page');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

describe('discover', () => {
  it("reads the metadata under the base URL's path, as the client's calls go (a gateway's prefix stays)", async () => {
    const paths: string[] = [];
    const server = createServer((request, response) => {
      paths.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/appliances/`;
      expect(await oauth.discover(base)).toEqual(metadata);
      expect(paths).toEqual(['/appliances/.well-known/oauth-authorization-server']);
    } finally {
      server.close();
    }
  });
});

describe('code exchange and device flow on the wire', () => {
  const client = { clientId: 'svc_1', clientSecret: 'key' };

  it('exchanges a code with its verifier and redirect URI (RFC 6749 §4.1.3, RFC 7636 §4.5)', async () => {
    const endpoint = await scriptedEndpoint([{ status: 200, body: { access_token: 'at', token_type: 'Bearer', expires_in: 60, refresh_token: 'rt', scope: 'devices' } }]);
    try {
      const tokens = await oauth.exchangeCode({ ...metadata, token_endpoint: `${endpoint.url}/oauth/token` }, client, { code: 'c', redirectUri: 'https://p.example/cb', codeVerifier: 'v' });
      expect(tokens).toMatchObject({ accessToken: 'at', tokenType: 'Bearer', refreshToken: 'rt', scope: 'devices' });
      expect(tokens.expiresAt! - Date.now()).toBeGreaterThan(55_000);
      expect(endpoint.forms).toEqual([{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'https://p.example/cb', code_verifier: 'v' }]);
    } finally {
      endpoint.close();
    }
  });

  it('starts a device authorization and polls through authorization_pending to the tokens (RFC 8628)', async () => {
    const endpoint = await scriptedEndpoint([
      { status: 200, body: { device_code: 'dc', user_code: 'WDJB-MJHT', verification_uri: 'https://x/device', expires_in: 600, interval: 0 } },
      { status: 400, body: { error: 'authorization_pending' } },
      { status: 200, body: { access_token: 'at', token_type: 'Bearer', expires_in: 3600 } },
    ]);
    try {
      const served = { ...metadata, token_endpoint: `${endpoint.url}/oauth/token`, device_authorization_endpoint: `${endpoint.url}/oauth/device_authorization` };
      const authorization = await oauth.startDeviceAuthorization(served, client, ['devices', 'push']);
      expect(authorization).toMatchObject({ deviceCode: 'dc', userCode: 'WDJB-MJHT', verificationUri: 'https://x/device', interval: 0 });
      expect((await oauth.pollDeviceToken(served, client, authorization)).accessToken).toBe('at');
      expect(endpoint.forms[0]).toEqual({ scope: 'devices push' });
      expect(endpoint.forms.slice(1)).toEqual([1, 2].map(() => ({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'dc' })));
    } finally {
      endpoint.close();
    }
  });

  it('stops polling on access_denied with an OAuthError', async () => {
    const endpoint = await scriptedEndpoint([{ status: 400, body: { error: 'access_denied', error_description: 'the owner said no' } }]);
    try {
      const authorization = { deviceCode: 'dc', userCode: 'u', verificationUri: 'v', expiresAt: Date.now() + 60_000, interval: 0 };
      const denied = oauth.pollDeviceToken({ ...metadata, token_endpoint: endpoint.url }, client, authorization);
      await expect(denied).rejects.toMatchObject({ name: 'OAuthError', error: 'access_denied', httpStatus: 400, message: 'access_denied: the owner said no' });
    } finally {
      endpoint.close();
    }
  });
});
