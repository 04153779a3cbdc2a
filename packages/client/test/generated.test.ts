/** The committed generated types are what the generators write today: re-run `npm run -w @appliance-cloud/client generate` when this fails. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deviceTypesSource } from '../scripts/device-types.js';
import { errorCodesSource } from '../scripts/error-codes.js';
import { openApiTypesSource, servedOpenApi } from '../scripts/openapi-types.js';

const committed = (file: string) => readFileSync(new URL(`../src/generated/${file}`, import.meta.url), 'utf8');

describe('generated types', () => {
  it("match the OpenAPI document the server serves (drift means: run the package's generate script)", async () => {
    expect(await openApiTypesSource(await servedOpenApi())).toBe(committed('openapi.ts'));
  });

  it("match the catalog's models", () => {
    expect(deviceTypesSource()).toBe(committed('devices.ts'));
  });

  it("match the server's error table", () => {
    expect(errorCodesSource()).toBe(committed('errors.ts'));
  });
});
