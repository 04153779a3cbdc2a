/**
 * Why the database of a DATABASE_URL cannot be opened, as a setting to fix (the CLI prints one line
 * and exits 2) rather than a crash: no server answers, the database or role does not exist, TLS
 * does not fit the server (sslmode), the SQLite file cannot be opened or is not a database. Any other failure is not the setting's fault and stays as it is.
 */
import { ConfigError, redactDatabaseUrl } from '../config.js';

/** Network failures of a connect, as Node names them. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** Node's codes for a server certificate its TLS refused (OpenSSL's verify results, and a name that does not match). */
const CERTIFICATE_REFUSED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
]);

/** What pg says, with no code, when sslmode asks for TLS and the server has none. */
const NO_TLS = 'The server does not support SSL connections';

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The ConfigError `error` stands for, or undefined when opening failed for another reason. */
export function unusableDatabase(error: unknown, databaseUrl: string): ConfigError | undefined {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const shown = redactDatabaseUrl(databaseUrl);
  if (databaseUrl.startsWith('sqlite:')) {
    if (code === 'SQLITE_NOTADB') {
      return new ConfigError(`DATABASE_URL: ${shown} is not a SQLite database (${message}); name the database file, or a path where there is none yet`);
    }
    if (code !== undefined && ['SQLITE_CANTOPEN', 'EACCES', 'EROFS', 'ENOTDIR', 'EEXIST'].includes(code)) {
      return new ConfigError(`DATABASE_URL: cannot open the SQLite file of ${shown} (${message}); name a writable path, as in sqlite:./data/appliance-cloud.db`);
    }
    return undefined;
  }
  const { host, port, pathname } = new URL(databaseUrl);
  const server = `${host}${port ? '' : ':5432'}`;
  // A SQLSTATE is the server's answer: its message may name a *_timeout parameter, yet the server did answer.
  const sqlState = code !== undefined && /^[0-9A-Z]{5}$/.test(code);
  if ((code !== undefined && UNREACHABLE.has(code)) || (!sqlState && /timeout/i.test(message))) {
    return new ConfigError(`DATABASE_URL: no PostgreSQL answers at ${server} (${code ?? message}); start it, or set DATABASE_URL to a reachable postgres://… or to sqlite:<file>`);
  }
  // sslmode is the URL's: its mismatch with the server is a setting to fix, not a crash.
  if (message === NO_TLS) {
    return new ConfigError(`DATABASE_URL: PostgreSQL at ${server} does not accept TLS connections (${message}); enable SSL on the server, or remove sslmode from ${shown}`);
  }
  if (code !== undefined && CERTIFICATE_REFUSED.has(code)) {
    return new ConfigError(`DATABASE_URL: the TLS certificate of PostgreSQL at ${server} was refused (${code}: ${message}); give its CA with sslrootcert=<file>, or check sslmode in ${shown}`);
  }
  if (code === '3D000') {
    const name = decodeURIComponent(pathname.slice(1));
    return new ConfigError(`DATABASE_URL: database "${name}" does not exist on ${server}; create it (createdb ${name}) or name an existing one`);
  }
  // A setting the URL passes to the server (statement_timeout=abc, options=-c foo=bar) that it refused,
  // or a search_path naming no schema (3F000), which leaves the migrations nowhere to create tables.
  if (code === '22023' || code === '42704' || code === '3F000') {
    return new ConfigError(`DATABASE_URL: PostgreSQL at ${server} refused a parameter of the URL (${message}); check the query parameters of ${shown}`);
  }
  // Class 28: invalid authorization (a wrong password, an unknown role).
  if (code?.startsWith('28')) return new ConfigError(`DATABASE_URL: PostgreSQL at ${server} refused the login (${message}); check the user and password of ${shown}`);
  return undefined;
}
