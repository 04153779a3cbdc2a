/** How the client reached the deployment, as the TLS-terminating proxy in front of it says (DESIGN A.1). */
import type { FastifyRequest } from 'fastify';

/** The first value of a forwarded header (a proxy chain appends its own after a comma). */
export function firstForwarded(header: string | string[] | undefined): string | undefined {
  return (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim() || undefined;
}

/** The scheme the client used: the first X-Forwarded-Proto, else the connection's. */
export function proxiedProtocol(request: FastifyRequest): string {
  return firstForwarded(request.headers['x-forwarded-proto']) ?? request.protocol;
}

/** Whether the client's connection is TLS, so that cookies are Secure: the proxy says so, or PUBLIC_URL is https. */
export function overTls(request: FastifyRequest, publicUrl: string | null): boolean {
  return proxiedProtocol(request) === 'https' || (publicUrl?.startsWith('https:') ?? false);
}
