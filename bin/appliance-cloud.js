#!/usr/bin/env node
// Launches the compiled CLI. `npm ci` builds dist/ through the `prepare` script.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'appliance-cloud is not built: dist/cli/index.js is missing.\n' +
      'Build it in the package directory with `npm run build` (or `npm ci`, which builds through `prepare`).\n',
  );
  process.exit(1);
}
await import(entry.href);
