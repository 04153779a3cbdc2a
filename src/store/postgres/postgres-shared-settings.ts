/** Shared settings on PostgreSQL (areas/shared-settings.ts). */
import type { SharedSettingsArea } from '../areas/shared-settings.js';
import { area, type Sql } from './database.js';

async function readSharedSetting(sql: Sql, name: string): Promise<string | null> {
  return (await sql.one<{ value: string }>('SELECT value FROM shared_settings WHERE name = $1', name))?.value ?? null;
}

async function writeSharedSetting(sql: Sql, name: string, value: string): Promise<void> {
  await sql.run('INSERT INTO shared_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value', name, value);
}

export function postgresSharedSettings(sql: Sql): SharedSettingsArea {
  return area(sql, { readSharedSetting, writeSharedSetting });
}
