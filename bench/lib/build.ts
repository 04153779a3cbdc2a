/**
 * The server under test runs as compiled JavaScript, as `appliance-cloud serve` does in production:
 * under tsx its loader thread alone would add ~35 MB of RSS and transpile at start-up. It is built
 * fresh from the current source on every run (dist/ may be stale), without the type check, into a
 * directory of its own under node_modules/.cache (several benchmarks may run at once), where
 * `fastify` & co. still resolve from the project's node_modules; it is removed when the run exits.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache');
const ASSET = /\.(sql|json)$/;

/** Compiles src/ and returns the path of the CLI entry (`node <entry> serve`). */
export function buildServer(): string {
  mkdirSync(CACHE, { recursive: true });
  const build = mkdtempSync(join(CACHE, 'appliance-cloud-bench-'));
  process.once('exit', () => rmSync(build, { recursive: true, force: true }));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(build, 'dist'), '--noCheck', '--sourceMap', 'false'], {
    stdio: 'inherit',
  });
  // What the code reads at run time, laid out as the published package (package.json "files"):
  // data and the docs page's assets beside the modules, reference/ beside dist/, and the package.json that makes the .js
  // files ESM and gives the version.
  const src = join(ROOT, 'src');
  const docsAssets = join(src, 'docs', 'assets');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !(ASSET.test(entry.name) || entry.parentPath === docsAssets)) continue;
    const target = join(build, 'dist', relative(src, join(entry.parentPath, entry.name)));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(entry.parentPath, entry.name), target);
  }
  symlinkSync(join(ROOT, 'reference'), join(build, 'reference'));
  copyFileSync(join(ROOT, 'package.json'), join(build, 'package.json'));
  return join(build, 'dist', 'cli', 'index.js');
}
