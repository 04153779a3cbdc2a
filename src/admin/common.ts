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
import { envelopeMessageId, success } from '../api/envelope.js';
import type { Clock } from '../ids.js';

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
  return success(envelopeMessageId(request.headers['x-message-id']), response, clock);
}
