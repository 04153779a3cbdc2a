/** The partner interface (DESIGN A): its routes, in the group whose checks they need. */
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.js';
import { partnerPlugin } from './plugins/partner.js';
import { controlRoutes, deviceListRoutes, deviceRoutes } from './routes/devices.js';
import { subscriptionListRoutes, subscriptionRoutes } from './routes/subscriptions.js';
import { userRoutes } from './routes/users.js';

export function partnerApi(ctx: AppContext): FastifyPluginAsync {
  return partnerPlugin(ctx, {
    account(app) {
      deviceListRoutes(app, ctx);
      userRoutes(app, ctx);
      subscriptionListRoutes(app, ctx);
    },
    device(app) {
      deviceRoutes(app, ctx);
      subscriptionRoutes(app, ctx);
    },
    control(app) {
      controlRoutes(app, ctx);
    },
  });
}
