/** The partner interface (DESIGN A): its routes, in the group whose checks and scope they need. */
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.js';
import { partnerPlugin } from './plugins/partner.js';
import { controlRoutes, deviceListRoutes, deviceRoutes } from './routes/devices.js';
import { eventListRoutes, eventRoutes, pushListRoutes, pushRoutes } from './routes/subscriptions.js';
import { userRoutes } from './routes/users.js';

export function partnerApi(ctx: AppContext): FastifyPluginAsync {
  return partnerPlugin(ctx, {
    account: {
      any: (app) => userRoutes(app, ctx),
      devices: (app) => deviceListRoutes(app, ctx),
      push: (app) => pushListRoutes(app, ctx),
      events: (app) => eventListRoutes(app, ctx),
    },
    device: {
      devices: (app) => deviceRoutes(app, ctx),
      push: (app) => pushRoutes(app, ctx),
      events: (app) => eventRoutes(app, ctx),
      control: (app) => controlRoutes(app, ctx),
    },
  });
}
