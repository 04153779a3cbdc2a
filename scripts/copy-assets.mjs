#!/usr/bin/env node
// tsc emits only JavaScript: copy the data files the code reads at run time (src/**/*.sql, src/**/*.json,
// and the docs page's assets src/docs/assets/*)
// to the same paths under dist/, e.g. src/store/sqlite/migrations/001_init.sql → dist/store/sqlite/migrations/.
// An argument names another output directory (the benchmarks' own builds).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src');
const to = process.argv[2] ?? join(root, 'dist');
const ASSET = /\.(sql|json)$/;
const DOCS_ASSETS = join(from, 'docs', 'assets');

let copied = 0;
for (const entry of readdirSync(from, { recursive: true, withFileTypes: true })) {
  const source = join(entry.parentPath, entry.name);
  if (!entry.isFile() || !(ASSET.test(entry.name) || entry.parentPath === DOCS_ASSETS)) continue;
  const target = join(to, relative(from, source));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(source, target);
  copied += 1;
}
console.log(`copy-assets: ${copied} file(s) from src/ to ${relative(root, to)}/`);
