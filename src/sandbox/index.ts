/** `appliance-cloud sandbox`: the server in phase QA with the demo world seeded and its credentials printed. */
import { baseUrl, type Config } from '../config.js';
import { randomId } from '../ids.js';
import { installSignalHandlers, startServer, type RunningServer } from '../server.js';
import { formatBanner } from './banner.js';
import { credentialsPath, readCredentials, writeCredentials } from './credentials.js';
import { seedSandbox, type SandboxWorld } from './world.js';

export interface SandboxOptions {
  /** The sandbox service's callbackUrl (`--callback-url`, env CALLBACK_URL). */
  callbackUrl?: string;
}

/** Starts the sandbox; resolves once it listens, its banner is printed and SIGTERM/SIGINT drain it. */
export async function runSandbox(config: Config, options: SandboxOptions = {}): Promise<{ server: RunningServer; world: SandboxWorld }> {
  const file = credentialsPath(config.databaseUrl);
  const saved = readCredentials(file);
  // ADMIN_TOKEN wins; otherwise the one of an earlier run, so admin scripts keep working.
  const adminToken = config.adminToken ?? saved?.adminToken ?? randomId(24);
  let world: SandboxWorld | undefined;
  const server = await startServer({ ...config, adminToken }, {
    anyPortIfTaken: true,
    prepare: async (ctx, app) => {
      world = await seedSandbox(ctx, saved, { adminToken, ...(options.callbackUrl ? { callbackUrl: options.callbackUrl } : {}) });
      writeCredentials(file, world.credentials);
      // "Try it out" in /docs calls as the demo service and user without typing their credentials.
      const { accessToken, serviceId, serviceKey } = world.credentials;
      app.tryItOut.preset({ accessToken, serviceId, serviceKey });
    },
  });
  if (!world) throw new Error('The sandbox world was not seeded');
  // Written again now that the port is known, which may not be PORT.
  writeCredentials(file, { ...world.credentials, localUrl: server.url });
  const banner = formatBanner(world, {
    localUrl: server.url,
    baseUrl: baseUrl(config),
    requestedPort: config.port,
    portTaken: server.portTaken,
    mqtt: { ...server.mqtt, requestedPort: config.mqttPort },
    credentialsFile: file,
    consoleLink: `${server.url}/console/sign-in/${server.app.signInCodes.issue(Date.now())}`,
  });
  process.stdout.write(banner);
  installSignalHandlers(server);
  return { server, world };
}
