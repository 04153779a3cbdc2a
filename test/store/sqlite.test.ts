import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { storeContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'store-contract-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

storeContract('SQLite in memory', () => openStore('sqlite::memory:'));
storeContract('a SQLite file', () => openStore(`sqlite:${join(dir, `store-${++files}.db`)}`));
