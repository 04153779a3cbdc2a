/**
 * The running server that `sim` and `listen` call through its admin API: where it listens and its
 * admin token, from the flags, else the environment, else the sandbox's data directory.
 */
import { ConfigError } from '../config.js';
import { ApiError, ERRORS, type ErrorCode } from '../errors.js';
import { newMessageId } from '../ids.js';
import { credentialsPath, readCredentials, type SandboxCredentials } from '../sandbox/credentials.js';

export interface Target {
  url: string;
  adminToken: string;
  /** The sandbox's saved world, when the data directory has one. */
  sandbox: SandboxCredentials | null;
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/appliance-cloud.db';

/**
 * --url, else where the sandbox of DATABASE_URL last listened (it may have fallen back from a taken
 * PORT), else http://127.0.0.1:$PORT; --admin-token, else ADMIN_TOKEN, else the sandbox's.
 */
export function targetOf(options: Record<string, unknown>, env: NodeJS.ProcessEnv): Target {
  const sandbox = readCredentials(credentialsPath((options.databaseUrl as string | undefined) ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL));
  const url = (options.url as string | undefined) ?? sandbox?.localUrl ?? `http://127.0.0.1:${env.PORT ?? '8080'}`;
  const adminToken = (options.adminToken as string | undefined) ?? env.ADMIN_TOKEN ?? sandbox?.adminToken;
  if (!adminToken) throw new ApiError('1301', 'No admin token: pass --admin-token, set ADMIN_TOKEN, or run from the sandbox folder.');
  return { url: url.replace(/\/$/, ''), adminToken, sandbox };
}

/** One admin call; an error envelope becomes the ApiError it stands for, no server answering a ConfigError (exit 2). */
export async function callAdmin(target: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.adminToken}`,
        'x-message-id': newMessageId(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ConfigError(
      `--url: no appliance-cloud server answers at ${target.url} (${cause?.code ?? cause?.message ?? String(error)}); start one with \`appliance-cloud sandbox\`, or pass --url <the URL it printed>`,
    );
  }
  // Something else may listen there (a stale sandbox.json's port taken since): a settings problem, not a crash.
  const envelope = (await response.json().catch(() => null)) as { response?: unknown; error?: { code: string; message: string } } | null;
  if (typeof envelope !== 'object' || envelope === null || !('response' in envelope || 'error' in envelope)) {
    throw new ConfigError(`--url: ${target.url} answered HTTP ${response.status} without an appliance-cloud envelope; pass --url <the URL the server printed>`);
  }
  if (envelope.error) {
    const code = (envelope.error.code in ERRORS ? envelope.error.code : '2000') as ErrorCode;
    throw new ApiError(code, envelope.error.message);
  }
  return envelope.response;
}
