/**
 * The OAuth helpers (DESIGN G): their pure parts, and the refresh against a loopback token endpoint
 * as RFC 6749 §6 describes one. Their end-to-end test against our authorization server waits for
 * issue 13's branch: the helpers follow RFC 6749, 7636, 8414 and 8628, not that server's code.
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

describe('refreshingTokenProvider on the wire', () => {
  it('refreshes once for concurrent calls, with client_secret_basic, and saves the rotated refresh token', async () => {
    const seen: { authorization?: string; body: string }[] = [];
    let issued = 0;
    // A token endpoint as RFC 6749 §6 describes it, rotating the refresh token on every use.
    const server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += String(chunk);
      seen.push({ authorization: request.headers.authorization, body });
      issued++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: `at_${issued + 1}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `rt_${issued + 1}` }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    let stored: oauth.TokenSet = { accessToken: 'at_1', tokenType: 'Bearer', expiresAt: Date.now() - 1000, refreshToken: 'rt_1' };
    // A store that takes its time, as a database would.
    const store: oauth.TokenStore = {
      load: async () => (await new Promise((resolve) => setTimeout(resolve, 20)), stored),
      save: async (tokens) => void (await new Promise((resolve) => setTimeout(resolve, 20)), (stored = tokens)),
    };
    try {
      const provider = oauth.refreshingTokenProvider({
        metadata: { ...metadata, token_endpoint: `http://127.0.0.1:${port}/oauth/token` },
        client: { clientId: 'svc 1', clientSecret: 'k:ey' },
        store,
      });
      expect(await Promise.all([provider(), provider(), provider()])).toEqual(['at_2', 'at_2', 'at_2']);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from('svc+1:k%3Aey').toString('base64')}`);
      expect(Object.fromEntries(new URLSearchParams(seen[0]!.body))).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt_1' });
      expect(stored.refreshToken).toBe('rt_2');
    } finally {
      server.close();
    }
  });
});
