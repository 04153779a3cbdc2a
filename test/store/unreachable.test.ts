import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { unusableDatabase } from '../../src/store/unreachable.js';

const URL = 'postgres://app:secret@db.internal:5432/app?statement_timeout=abc';

/** An error as the pg driver gives it: a message and Node's or the server's code. */
function driverError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('unusableDatabase', () => {
  it('says no server answers when the connect fails or times out', () => {
    expect(unusableDatabase(driverError('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED'), URL)?.message).toBe(
      'DATABASE_URL: no PostgreSQL answers at db.internal:5432 (ECONNREFUSED); start it, or set DATABASE_URL to a reachable postgres://… or to sqlite:<file>',
    );
    expect(unusableDatabase(new Error('Connection terminated due to connection timeout'), URL)).toBeInstanceOf(ConfigError);
  });

  it('names a parameter of the URL the server refused, not a server that does not answer', () => {
    const refused = unusableDatabase(driverError('invalid value for parameter "statement_timeout": "NaN"', '22023'), URL);
    expect(refused?.message).toBe(
      'DATABASE_URL: PostgreSQL at db.internal:5432 refused a parameter of the URL (invalid value for parameter "statement_timeout": "NaN"); check the query parameters of postgres://***@db.internal:5432/app?statement_timeout=abc',
    );
    expect(unusableDatabase(driverError('unrecognized configuration parameter "foo"', '42704'), URL)?.message).toMatch(/refused a parameter of the URL/);
    // options=-c search_path=<a schema that is not there>: the first migration has nowhere to create its tables.
    expect(unusableDatabase(driverError('no schema has been selected to create in', '3F000'), URL)?.message).toMatch(/refused a parameter of the URL \(no schema has been selected to create in\)/);
  });

  it('hides a password given as a parameter of the query, which the driver takes too', () => {
    const inQuery = 'postgres://app@db.internal:5432/app?sslmode=disable&password=hunter2';
    expect(unusableDatabase(driverError('password authentication failed for user "app"', '28P01'), inQuery)?.message).toBe(
      'DATABASE_URL: PostgreSQL at db.internal:5432 refused the login (password authentication failed for user "app"); check the user and password of postgres://***@db.internal:5432/app?sslmode=disable&password=***',
    );
  });

  it('leaves another answer of the server as it is, even when it speaks of a timeout', () => {
    expect(unusableDatabase(driverError('canceling statement due to statement timeout', '57014'), URL)).toBeUndefined();
  });

  it('names the TLS mismatch of an sslmode, which the driver reports with no SQLSTATE', () => {
    const tls = 'postgres://app:secret@db.internal:5432/app?sslmode=require';
    // pg's own words when sslmode asks for TLS and the server answers that it has none.
    expect(unusableDatabase(new Error('The server does not support SSL connections'), tls)?.message).toBe(
      'DATABASE_URL: PostgreSQL at db.internal:5432 does not accept TLS connections (The server does not support SSL connections); enable SSL on the server, or remove sslmode from postgres://***@db.internal:5432/app?sslmode=require',
    );
    // pg reads sslmode=require as verify-full: a private CA's certificate is refused by Node's TLS.
    for (const code of ['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      expect(unusableDatabase(driverError('self-signed certificate', code), tls)?.message).toBe(
        `DATABASE_URL: the TLS certificate of PostgreSQL at db.internal:5432 was refused (${code}: self-signed certificate); give its CA with sslrootcert=<file>, or check sslmode in postgres://***@db.internal:5432/app?sslmode=require`,
      );
    }
  });

  it('names a SQLite file that is something else, which better-sqlite3 finds only when it first reads it', () => {
    expect(unusableDatabase(driverError('file is not a database', 'SQLITE_NOTADB'), 'sqlite:./notes.txt')?.message).toBe(
      'DATABASE_URL: sqlite:./notes.txt is not a SQLite database (file is not a database); name the database file, or a path where there is none yet',
    );
  });
});
