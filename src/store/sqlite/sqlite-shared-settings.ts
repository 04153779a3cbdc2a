/** Shared settings on SQLite (areas/shared-settings.ts). */
import type { SharedSettingsArea } from '../areas/shared-settings.js';
import { area, type Sql } from './database.js';

function readSharedSetting(sql: Sql, name: string): string | null {
  return sql.one<{ value: string }>('SELECT value FROM shared_settings WHERE name = ?', name)?.value ?? null;
}

function writeSharedSetting(sql: Sql, name: string, value: string): void {
  sql.write(() => sql.run('INSERT INTO shared_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', name, value));
}

export function sqliteSharedSettings(sql: Sql): SharedSettingsArea {
  return area(sql, { readSharedSetting, writeSharedSetting });
}
