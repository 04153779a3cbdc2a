import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { flagOf, readSettings, SETTING_NAMES } from '../../src/cli/settings.js';

/** The setting names as config.ts declares them in `Settings`, read from its source. */
function declaredSettings(): string[] {
  const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
  const declaration = /export type Settings = Partial<Record<([\s\S]*?),\s*string \| undefined/.exec(source)?.[1] ?? '';
  return [...declaration.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]!);
}

describe('settings ↔ flags', () => {
  it('has a row for every setting of config.ts, and no other', () => {
    expect(declaredSettings().length).toBeGreaterThan(10);
    expect([...SETTING_NAMES].sort()).toEqual(declaredSettings().sort());
  });

  it('gives sandbox and serve a flag for every setting', () => {
    const program = buildProgram({});
    for (const name of ['sandbox', 'serve']) {
      const command = program.commands.find((c) => c.name() === name)!;
      const flags = command.options.map((o) => o.long);
      for (const setting of SETTING_NAMES) expect(flags, `${name} ${setting}`).toContain(flagOf(setting));
    }
  });

  it('documents every setting in the README table, with its flag', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const name of SETTING_NAMES) expect(readme).toContain(`| \`${name}\` | \`${flagOf(name)}\` |`);
  });

  it('names flags in kebab case', () => {
    expect(flagOf('DATABASE_URL')).toBe('--database-url');
    expect(flagOf('PORT')).toBe('--port');
  });

  it('reads the environment, and a flag wins over it', () => {
    const settings = readSettings({ port: '9000' }, { PORT: '8081', REGION: 'EIC' });
    expect(settings.PORT).toBe('9000');
    expect(settings.REGION).toBe('EIC');
    expect(settings.DATABASE_URL).toBeUndefined();
  });

  it('parses flags from the command line over the environment', async () => {
    const program = buildProgram({ DATABASE_URL: 'sqlite::memory:' });
    const serve = program.commands.find((c) => c.name() === 'serve')!;
    serve.action(() => undefined);
    await program.parseAsync(['node', 'appliance-cloud', 'serve', '--admin-token', 't', '--database-url', 'sqlite:/tmp/x.db']);
    expect(readSettings(serve.opts(), { DATABASE_URL: 'sqlite::memory:' })).toMatchObject({ ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite:/tmp/x.db' });
  });
});
