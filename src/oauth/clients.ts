/** Calling services as OAuth clients (DESIGN G): where an authorization may send the owner back. */
import type { Phase } from '../config.js';
import { isLoopbackHost } from '../delivery/address-guard.js';
import { fail } from '../errors.js';

/** Refuses (1102) a redirect URI a phase does not allow: https only in OP, and never to loopback there; http to loopback also in QA. */
export function checkRedirectUri(uri: string, phase: Phase): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw fail('1102', `redirectUris must hold absolute URLs; got ${JSON.stringify(uri)}.`);
  }
  if (url.hash) throw fail('1102', `A redirect URI has no fragment; got ${JSON.stringify(uri)}.`);
  // An owner's browser in production has nothing of the partner's on its own machine (DESIGN G).
  if (isLoopbackHost(url.hostname) && phase !== 'QA') {
    throw fail('1102', `Redirect URIs to ${url.hostname} are allowed in phase QA only; got ${JSON.stringify(uri)}.`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw fail('1102', `A redirect URI must be https${phase === 'QA' ? ' (or http to 127.0.0.1 or localhost)' : ''}; got ${JSON.stringify(uri)}.`);
}
