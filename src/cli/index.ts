/** Entry of the `appliance-cloud` command: runs the program and turns known failures into exit codes. */
import { type Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ApiError } from '../errors.js';
import { buildProgram } from './program.js';

/**
 * Exit codes: 1 for a refused call or a failure, 2 for settings that cannot be used (a taken PORT too)
 * and for a command line that is not one (an unknown option, a missing argument), as is usual.
 */
function failureOf(error: unknown): { code: number; message: string } {
  if (error instanceof ConfigError) return { code: 2, message: `appliance-cloud: ${error.message}` };
  // Commander printed its own message; help and --version end here too, with 0.
  if (error instanceof CommanderError) return { code: error.exitCode === 0 ? 0 : 2, message: '' };
  if (error instanceof ApiError) return { code: 1, message: `error ${error.code}: ${error.message}` };
  return { code: 1, message: `appliance-cloud: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` };
}

/** The command and every command under it: commander's exitOverride is not inherited by added commands. */
function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

try {
  const program = buildProgram();
  for (const command of everyCommand(program)) command.exitOverride();
  await program.parseAsync(process.argv);
} catch (error) {
  const { code, message } = failureOf(error);
  if (message) process.stderr.write(`${message}\n`);
  process.exit(code);
}
