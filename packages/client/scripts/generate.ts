/** Writes the generated types of src/generated/ from the server's OpenAPI document and catalog. */
import { writeFileSync } from 'node:fs';
import { deviceTypesSource } from './device-types.js';
import { errorCodesSource } from './error-codes.js';
import { openApiTypesSource, servedOpenApi } from './openapi-types.js';

const GENERATED = new URL('../src/generated/', import.meta.url);

writeFileSync(new URL('openapi.ts', GENERATED), await openApiTypesSource(await servedOpenApi()));
writeFileSync(new URL('devices.ts', GENERATED), deviceTypesSource());
writeFileSync(new URL('errors.ts', GENERATED), errorCodesSource());
console.log(`wrote ${new URL('openapi.ts', GENERATED).pathname} , devices.ts and errors.ts`);
