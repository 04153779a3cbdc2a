/** What every admin route file shares: the typed instance it registers on and the success envelope. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { quote } from '../api/checks.js';
import { requestMessageId, success } from '../api/envelope.js';
import { fail } from '../errors.js';
import { isDeviceId, type Clock } from '../ids.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes no body as an empty one (its fields all have defaults), whatever Content-Type says. */
    optionalBody?: boolean;
  }
}

/** The admin plugin's instance, typed so that a route's params, query and body follow from its schema. */
export type AdminApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** The success envelope of DESIGN A.3, echoing the request's x-message-id when it has a valid one. */
export function answer<T>(request: FastifyRequest, clock: Clock, response: T) {
  return success(requestMessageId(request), response, clock);
}

/** A device id of a path or a command line, refused as the partner interface refuses it (1224) rather than looked up. */
export function wellFormedDeviceId(deviceId: string): string {
  if (!isDeviceId(deviceId)) throw fail('1224', `Device id ${quote(deviceId)} is malformed: it must be 1 to 128 of A-Z, a-z, 0-9, _ and -.`);
  return deviceId;
}
