/** The `appliance-cloud` command line: thin commands over the same functions the HTTP interfaces use. */
import { Command } from 'commander';
import { ConfigError, loadConfig, PACKAGE_VERSION } from '../config.js';
import { checkCallbackUrl } from '../delivery/address-guard.js';
import { openStore } from '../store/index.js';
import { adminCommand, databaseConfig } from './admin.js';
import { listenCommand } from './listen.js';
import { addSettingOptions, readSettings } from './settings.js';
import { simCommand } from './sim.js';

/**
 * Builds the program; `env` is where settings not given as flags come from. The server modules are
 * imported by the commands that run one, so that `--help`, `migrate` and `admin` start quickly.
 */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('appliance-cloud')
    .description('The Home Appliance Cloud Interface: partner API, admin API, webhooks and virtual appliances.')
    .version(PACKAGE_VERSION)
    .showHelpAfterError();

  addSettingOptions(program.command('sandbox'))
    .description('run phase QA with a demo world (a service, a user, a virtual appliance of every type) and print its credentials')
    .option('--callback-url <url>', "the sandbox service's callbackUrl [env CALLBACK_URL]")
    .action(async (options: Record<string, unknown>) => {
      const config = loadConfig('sandbox', readSettings(options, env));
      const callbackUrl = (options.callbackUrl as string | undefined) ?? env.CALLBACK_URL;
      const check = callbackUrl ? checkCallbackUrl(callbackUrl, { phase: config.phase, allowList: config.deliveryAllowList }) : undefined;
      if (check && !check.ok) throw new ConfigError(`CALLBACK_URL (--callback-url) "${callbackUrl}" cannot receive messages: ${check.reason}`);
      const { runSandbox } = await import('../sandbox/index.js');
      await runSandbox(config, callbackUrl ? { callbackUrl } : {});
    });

  addSettingOptions(program.command('serve'))
    .description('run the production server: needs ADMIN_TOKEN, seeds nothing')
    .action(async (options: Record<string, unknown>) => {
      const config = loadConfig('serve', readSettings(options, env));
      const { installSignalHandlers, startServer } = await import('../server.js');
      await startServer(config, { running: installSignalHandlers });
    });

  addSettingOptions(program.command('migrate'), ['DATABASE_URL'])
    .description('apply pending database migrations, then exit')
    .action(async (options: Record<string, unknown>) => {
      // Opening the store is what migrates it.
      const store = await openStore(databaseConfig(options, env, ['DATABASE_URL']).databaseUrl);
      await store.close();
      process.stdout.write(`${JSON.stringify({ migrated: true })}\n`);
    });

  program.addCommand(adminCommand(env));
  program.addCommand(simCommand(env));
  program.addCommand(listenCommand(env));
  return program;
}
