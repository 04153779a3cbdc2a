/**
 * The server under test runs as compiled JavaScript, as `appliance-cloud serve` does in production:
 * under tsx its loader thread alone would add ~35 MB of RSS and transpile at start-up. It is built
 * fresh from the current source on every run (dist/ may be stale), or from a git revision's, without
 * the type check, into a directory of its own under node_modules/.cache (several benchmarks may run
 * at once), where `fastify` & co. still resolve from the project's node_modules; it is removed when
 * the run exits.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache');

/** A directory of its own under node_modules/.cache, removed when the run exits. */
function scratch(): string {
  mkdirSync(CACHE, { recursive: true });
  const dir = mkdtempSync(join(CACHE, 'appliance-cloud-bench-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Compiles the src/ of `source` (the project's own by default); returns the path of the CLI entry (`node <entry> serve`). */
export function buildServer(source: string = ROOT): string {
  const build = scratch();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(source, 'tsconfig.build.json'), '--outDir', join(build, 'dist'), '--noCheck', '--sourceMap', 'false'], {
    stdio: 'inherit',
  });
  // What the code reads at run time, laid out as the published package (package.json "files"):
  // data beside the modules (the build's own copy step), reference/ beside dist/, and the
  // package.json that makes the .js files ESM and gives the version.
  execFileSync(process.execPath, [join(source, 'scripts', 'copy-assets.mjs'), join(build, 'dist')], { stdio: 'inherit' });
  symlinkSync(join(ROOT, 'reference'), join(build, 'reference'));
  copyFileSync(join(source, 'package.json'), join(build, 'package.json'));
  return join(build, 'dist', 'cli', 'index.js');
}

/** Builds the tree of a git revision (`HEAD~1`, a branch, a hash) as buildServer builds the working tree. */
export function buildRevision(revision: string): string {
  // Resolved first, so that a name starting with `-` is a revision, never an option of git archive.
  const commit = execFileSync('git', ['rev-parse', '--verify', '--end-of-options', `${revision}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const tree = scratch();
  const archive = execFileSync('git', ['archive', '--format=tar', commit], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  // Its compiler settings name the project's type packages.
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  return buildServer(tree);
}
