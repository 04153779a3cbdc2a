/** Entry of the `appliance-cloud` command: runs the program and turns known failures into exit codes. */
import { ConfigError } from '../config.js';
import { ApiError } from '../errors.js';
import { buildProgram } from './program.js';

/** Exit codes: 1 for a refused call or a failure, 2 for settings that cannot be used (a taken PORT too). */
function failureOf(error: unknown): { code: number; message: string } {
  if (error instanceof ConfigError) return { code: 2, message: `appliance-cloud: ${error.message}` };
  if (error instanceof ApiError) return { code: 1, message: `error ${error.code}: ${error.message}` };
  return { code: 1, message: `appliance-cloud: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` };
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  const { code, message } = failureOf(error);
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
