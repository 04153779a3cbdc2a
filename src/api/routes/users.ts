/** GET /users and DELETE /user/service (DESIGN A.5). */
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { Envelope, errorResponses, success } from '../envelope.js';
import { partnerOf, type PartnerApp } from '../plugins/partner.js';
import { COMMON_CODES, Empty, PartnerHeaders, PARTNER_SECURITY } from '../schemas/partner.js';

/** Routes of the account group that every token may call. */
export function userRoutes(app: PartnerApp, ctx: AppContext): void {
  const { accounts, clock } = ctx;

  app.get('/users', {
    schema: {
      operationId: 'getUser', security: PARTNER_SECURITY, summary: "The token's user",
      tags: ['users'],
      headers: PartnerHeaders,
      response: { 200: Envelope(Type.Object({ userNumber: Type.String() })), ...errorResponses(COMMON_CODES) },
    },
  }, async (request) => {
    const { connection, headers } = partnerOf(request);
    return success(headers.messageId, { userNumber: connection.userNumber }, clock);
  });

  app.delete('/user/service', {
    schema: {
      operationId: 'disconnectUser', security: PARTNER_SECURITY, summary: 'Disconnect the user from the calling service',
      description: "Deletes the pair's push and event subscriptions, its loaded device list and lifecycle subscription, and revokes its tokens (later calls with them answer 1202). Other services of the user are untouched; messages already accepted are still delivered.",
      tags: ['users'],
      headers: PartnerHeaders,
      response: { 200: Envelope(Empty), ...errorResponses(COMMON_CODES) },
    },
  }, async (request) => {
    const { service, connection, headers } = partnerOf(request);
    await accounts.disconnect(service.serviceId, connection.userNumber);
    return success(headers.messageId, {}, clock);
  });
}
