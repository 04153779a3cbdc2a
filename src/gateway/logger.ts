/** The logging the gateway needs; pino's and Fastify's loggers satisfy it. */
export interface GatewayLogger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}
