/**
 * The two OpenAPI documents, generated from the route schemas by @fastify/swagger: the partner
 * interface (public) and the admin API (behind the admin token). What the route schemas cannot say is
 * added here, for the published contract only: security schemes, per-type schemas from the catalog
 * on the profile, status and control operations, and the `webhooks` section of DESIGN A.8.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifyRequest } from 'fastify';
import { DEVICE_TYPES } from '../catalog/index.js';
import { baseUrl, type Config } from '../config.js';
import { ERRORS } from '../errors.js';
import { demoCountry } from '../regions.js';
import { proxiedProtocol } from '../web/forwarded.js';
import { componentRef as ref, typeSchemas, type JsonSchema } from './catalog-schemas.js';
import { messageComponents, webhooksSection } from './webhooks.js';

const PARTNER_SCHEMES = {
  accessToken: { type: 'http', scheme: 'bearer', description: "The user's access token (header Authorization, bare or as `Bearer <token>`)." },
  serviceId: { type: 'apiKey', in: 'header', name: 'x-service-id', description: 'The calling service.' },
  serviceKey: { type: 'apiKey', in: 'header', name: 'x-service-key', description: "The calling service's key." },
};

const ADMIN_SCHEMES = { admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (header Authorization: Bearer <ADMIN_TOKEN>).' } };

/** Components take the `$id` of the shared schema they come from (`ErrorEnvelope`), not `def-N`. */
const refResolver = {
  buildLocalReference: (json: { $id?: unknown }, _baseUri: unknown, _fragment: string, i: number) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
};

/** The error table as a Markdown table: the docs come from the same source as the answers. */
function errorTableMarkdown(): string {
  const rows = Object.entries(ERRORS).map(([code, row]) => `| ${code} | ${row.http} | ${row.name} | ${row.when} |`);
  return ['| code | HTTP | name | when |', '|---|---|---|---|', ...rows].join('\n');
}

interface Operation {
  operationId?: string;
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema; example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema: { properties?: Record<string, JsonSchema> } }> }>;
}
type Document = Record<string, unknown> & { paths?: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, JsonSchema> } };

/** The success envelope's `response` of an operation, replaced by a reference. */
function setResponse(operation: Operation, schema: JsonSchema): void {
  const properties = operation.responses?.['200']?.content?.['application/json']?.schema.properties;
  if (properties) properties.response = schema;
}

/** The partner document's additions, applied once to the generated document. */
function typedPartnerDocument(document: Document, config: Pick<Config, 'region'>): Document {
  const types = typeSchemas();
  const country = demoCountry(config.region);
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      // The example is a country of this deployment's region, so "Try it out" passes the region check.
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'header' && parameter.name === 'x-country-code') parameter.example = country;
      switch (operation.operationId) {
        case 'getDeviceProfile':
          setResponse(operation, ref('DeviceProfile'));
          break;
        case 'getDeviceStatus':
          setResponse(operation, ref('DeviceStatus'));
          break;
        case 'controlDevice':
          setResponse(operation, ref('DeviceStatus'));
          if (operation.requestBody) operation.requestBody.content['application/json'] = { ...operation.requestBody.content['application/json'], schema: ref('DeviceControl') };
          break;
        case 'subscribeEvents':
          // The body is optional (DESIGN A.5): @fastify/swagger marks every declared body required.
          if (operation.requestBody) operation.requestBody.required = false;
          break;
      }
    }
  }
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      DeviceType: { type: 'string', enum: [...DEVICE_TYPES] },
      DeviceProfile: types.profile,
      DeviceStatus: types.status,
      DeviceControl: types.control,
      ...types.components,
      ...messageComponents(),
    },
  };
  document.webhooks = webhooksSection();
  return document;
}

/** @fastify/swagger's options for the partner interface's document. */
export function partnerDocumentOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Home Appliance Cloud Interface',
        version: config.version,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description: [
          'The partner interface of appliance-cloud: list, read, control and subscribe to home appliances.',
          'Every request carries the three credentials (Authorize) and the headers x-country-code and x-message-id (22 URL-safe base64 characters, fresh per request).',
          'Messages go to your service\'s callback URLs, signed per Standard Webhooks: see Webhooks. A Postman collection of these operations is at /postman.json.',
          '',
          `Every answer is an envelope; errors carry a code of this table:\n\n${errorTableMarkdown()}`,
        ].join('\n'),
      },
      servers: [{ url: baseUrl(config) }],
      components: { securitySchemes: PARTNER_SCHEMES },
      tags: [
        { name: 'devices', description: 'Devices, their profiles and status, and control' },
        { name: 'push', description: 'Push subscriptions: which devices\' notifications (DEVICE_PUSH) your service receives' },
        { name: 'event', description: 'Event subscriptions: which devices\' status changes (DEVICE_STATUS) your service receives, until they expire' },
        { name: 'users', description: "The user and the user's connection to your service" },
        { name: 'operations', description: 'Health and readiness' },
      ],
    },
    refResolver,
    transformObject: (generated) => ('openapiObject' in generated ? typedPartnerDocument(generated.openapiObject as Document, config) : generated.swaggerObject),
  } as SwaggerOptions;
}

/** @fastify/swagger's options for the admin API's document (served only with the admin token). */
export function adminDocumentOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'appliance-cloud admin API', version: config.version, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' }, description: 'Platform administration (DESIGN D): services, users, devices, messages and the simulator.' },
      servers: [{ url: baseUrl(config) }],
      components: { securitySchemes: ADMIN_SCHEMES },
            tags: [{ name: 'admin', description: 'Platform administration' }],
    },
    refResolver,
  } as SwaggerOptions;
}

/** A Host header as a browser sends it: a name or an address, and maybe a port. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The document for one request: first this server as the request reached it (so that "Try it out"
 * calls the same origin the page came from; https when a TLS proxy in front says so), then the public
 * base URL of DESIGN A.1.
 */
export function withServers(document: unknown, request: FastifyRequest, config: Pick<Config, 'region' | 'phase' | 'domain'>): Record<string, unknown> {
  const host = request.headers.host;
  const scheme = proxiedProtocol(request) === 'https' ? 'https' : 'http';
  const here = typeof host === 'string' && HOST.test(host) ? [{ url: `${scheme}://${host}`, description: 'This server, as your request reached it' }] : [];
  return { ...(document as Record<string, unknown>), servers: [...here, { url: baseUrl(config), description: 'The public base URL of this deployment' }] };
}
