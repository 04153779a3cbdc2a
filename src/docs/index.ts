/**
 * The partner interface's published contract, public (DESIGN E): /openapi.json, the interactive /docs
 * (Swagger UI served by the process, under the product's name and logo, with "Try it out" that works),
 * /postman.json, and `GET /` leading to /docs. Registered first in the scope of the routes it documents.
 */
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { NoRouteHandler } from '../api/plugins/errors.js';
import type { Config } from '../config.js';
import { demoCountry } from '../regions.js';
import { partnerDocumentOptions, withServers } from './document.js';
import { postmanCollection, type OpenApiDocument } from './postman.js';

/** What "Try it out" enters under Authorize by itself: the sandbox's demo credentials. */
export interface TryItOutCredentials {
  accessToken: string;
  serviceId: string;
  serviceKey: string;
}

/** The docs page's preset credentials: none until the sandbox gives its own. */
export interface TryItOut {
  preset(credentials: TryItOutCredentials): void;
  current(): TryItOutCredentials | null;
}

export function createTryItOut(): TryItOut {
  let preset: TryItOutCredentials | null = null;
  return {
    preset(credentials) {
      preset = credentials;
    },
    current: () => preset,
  };
}

const asset = (name: string): Buffer => readFileSync(new URL(`./assets/${name}`, import.meta.url));

/**
 * A function for Swagger UI's config, given as its browser source: @fastify/swagger-ui writes a
 * function's text into the page, where it runs inside the page's start-up (so it sees `ui`).
 */
function browserFunction<F extends (...args: never[]) => unknown>(source: string): F {
  return Object.assign(() => undefined, { toString: () => source }) as unknown as F;
}

type UiConfig = NonNullable<FastifySwaggerUiOptions['uiConfig']>;

const uiConfig: UiConfig = {
  displayOperationId: true,
  // try-it-out.js, loaded by the page before Swagger UI starts, defines both.
  requestInterceptor: browserFunction<NonNullable<UiConfig['requestInterceptor']>>('function (request) { return window.applianceCloudDocs.freshMessageId(request); }'),
  onComplete: browserFunction<NonNullable<UiConfig['onComplete']>>('function () { window.applianceCloudDocs.preauthorize(ui); }'),
};

const hidden = { schema: { hide: true } };

/** Registers the partner document, its UI and its other forms on `app`; routes registered after it are documented. */
export async function publicDocs(app: FastifyInstance, config: Config, noRoute: NoRouteHandler, tryItOut: TryItOut): Promise<void> {
  const document = (request: FastifyRequest) => withServers(app.swagger(), request, config);
  const logo = asset('logo.svg');

  await app.register(swagger, partnerDocumentOptions(config));
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    logo: { type: 'image/svg+xml', content: logo, href: '/docs', target: '_self' },
    theme: {
      title: 'appliance-cloud — Home Appliance Cloud Interface',
      css: [{ filename: 'theme.css', content: asset('theme.css').toString('utf8') }],
      js: [{ filename: 'try-it-out.js', content: asset('try-it-out.js').toString('utf8') }],
      favicon: [{ filename: 'logo.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: logo }],
    },
    uiConfig,
    transformSpecificationClone: false,
    transformSpecification: (_swaggerObject, request) => document(request),
  });

  // Only `/` itself: targets the router also brings here (`*`) are unknown paths, answered as such.
  app.get('/', hidden, async (request, reply) => (request.url === '/' ? reply.redirect('/docs') : noRoute(request, reply)));
  // The servers entry depends on the request's Host: no shared cache may keep one host's copy for another.
  app.get('/openapi.json', hidden, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return document(request);
  });
  app.get('/postman.json', hidden, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('content-disposition', 'attachment; filename="appliance-cloud.postman_collection.json"');
    return postmanCollection(document(request) as unknown as OpenApiDocument, { countryCode: demoCountry(config.region) });
  });
  app.get('/docs/try-it-out.json', hidden, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return tryItOut.current() ?? {};
  });
}
