/** Calling services: create, list, read, change, rotate the webhook secret (DESIGN D). */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { answer, type AdminApp } from './common.js';
import {
  adminSchema,
  NewServiceBody,
  NewServiceResponse,
  RotatedSecret,
  RotateSecretBody,
  ServiceIdParams,
  ServicePatchBody,
  ServiceView,
} from './schemas.js';
import type { Service } from '../core/model.js';
import { serviceView } from './views.js';

export function serviceRoutes(app: AdminApp, ctx: AppContext): void {
  const { accounts, clock } = ctx;
  const view = async (service: Service) => serviceView(service, await accounts.redirectUris(service.serviceId));

  app.post('/services', {
    schema: adminSchema(
      'createService', 'Create a calling service',
      { description: 'The service key and webhook secret are in this answer only.', body: NewServiceBody },
      NewServiceResponse,
    ),
  }, async (request) => {
    const { service, serviceKey, webhookSecret } = await accounts.createService(request.body);
    return answer(request, clock, { serviceId: service.serviceId, serviceKey, webhookSecret });
  });

  app.get('/services', {
    schema: adminSchema('listServices', 'List the calling services', {}, Type.Array(ServiceView)),
  }, async (request) => answer(request, clock, await Promise.all((await accounts.listServices()).map(view))));

  app.get('/services/:serviceId', {
    schema: adminSchema('getService', 'Read a calling service', { params: ServiceIdParams }, ServiceView, ['1305']),
  }, async (request) => answer(request, clock, await view(await accounts.getService(request.params.serviceId))));

  app.patch('/services/:serviceId', {
    schema: adminSchema(
      'updateService', 'Change a calling service',
      { description: 'Any of the create fields, and `enabled` (`true` also enables a disabled delivery endpoint).', params: ServiceIdParams, body: ServicePatchBody },
      ServiceView,
      ['1305'],
    ),
  }, async (request) => {
    const service = await accounts.updateService(request.params.serviceId, request.body);
    return answer(request, clock, await view(service));
  });

  app.post('/services/:serviceId/rotate-secret', {
    // None, or an empty one with Content-Type: application/json as many clients send: the defaults.
    config: { optionalBody: true },
    schema: adminSchema(
      'rotateWebhookSecret', "Rotate a service's webhook secret",
      {
        description: 'Body optional. Deliveries carry signatures of both the previous and the new secret for 24 h, or only the new one with `{"expirePreviousNow": true}`; a secret rotated out before the previous one stops signing at once.',
        params: ServiceIdParams,
        body: RotateSecretBody,
      },
      RotatedSecret,
      ['1305'],
    ),
  }, async (request) => {
    const webhookSecret = await accounts.rotateSecret(request.params.serviceId, request.body);
    return answer(request, clock, { webhookSecret });
  });
}
