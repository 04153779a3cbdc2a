/**
 * sandbox.json: the sandbox's credentials in clear, next to its database, so that a re-run shows
 * the same world (the store keeps only hashes of keys and tokens).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sqliteFile } from '../config.js';

export interface SandboxCredentials {
  serviceId: string;
  serviceKey: string;
  webhookSecret: string;
  userNumber: string;
  accessToken: string;
  /** Epoch milliseconds. */
  accessTokenExpiresAt: number;
  /** Generated on the first run; used whenever ADMIN_TOKEN is not set. */
  adminToken: string;
  /** Where the sandbox listens (it may have fallen back from a taken PORT): `sim` and `listen` call it there. */
  localUrl?: string;
}

const FIELDS = ['serviceId', 'serviceKey', 'webhookSecret', 'userNumber', 'accessToken', 'adminToken'] as const;

/** The directory holding the database file of a `sqlite:` URL (as store/index.ts reads it), else `./data`. */
export function dataDirectory(databaseUrl: string): string {
  const file = sqliteFile(databaseUrl);
  return file ? dirname(file) : 'data';
}

export function credentialsPath(databaseUrl: string): string {
  return join(dataDirectory(databaseUrl), 'sandbox.json');
}

/** The saved credentials, or null when there are none or the file is not ours. */
export function readCredentials(path: string): SandboxCredentials | null {
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const record = parsed as Record<string, unknown>;
  const complete = FIELDS.every((field) => typeof record[field] === 'string') && typeof record.accessTokenExpiresAt === 'number'
    && (record.localUrl === undefined || typeof record.localUrl === 'string');
  return complete ? (record as unknown as SandboxCredentials) : null;
}

/** Writes the credentials readable by the owner only: they open every door of the sandbox. */
export function writeCredentials(path: string, credentials: SandboxCredentials): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  // `mode` applies only when the file is created; an older file may have other permissions.
  chmodSync(path, 0o600);
}
