/**
 * A Postman collection (v2.1) of the partner document's operations, one folder per tag: the
 * credentials and the country as collection variables, a fresh x-message-id per request from a
 * pre-request script. Pure: a document in, a collection out.
 */

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  description?: string;
}
interface MediaType {
  schema?: { examples?: unknown[] };
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, MediaType> };
}
interface SecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
}
export interface OpenApiDocument {
  info: { title: string; description?: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, SecurityScheme> };
}

export const POSTMAN_SCHEMA = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** A fresh x-message-id in Postman's sandbox: 16 random bytes, URL-safe base64 without padding (DESIGN A.2). */
const MESSAGE_ID_SCRIPT = [
  "const id = CryptoJS.lib.WordArray.random(16).toString(CryptoJS.enc.Base64).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');",
  "pm.variables.set('messageId', id);",
];

/** The variable a header parameter or API key takes its value from, by header name. */
const VARIABLES: Record<string, string> = {
  'x-country-code': '{{countryCode}}',
  'x-message-id': '{{messageId}}',
};

function exampleBody(media: MediaType | undefined): string | undefined {
  if (!media) return undefined;
  const example = media.example ?? Object.values(media.examples ?? {})[0]?.value ?? media.schema?.examples?.[0] ?? {};
  return JSON.stringify(example, null, 2);
}

function request(document: OpenApiDocument, path: string, method: string, operation: Operation) {
  const schemes = document.components?.securitySchemes ?? {};
  const header: { key: string; value: string; disabled?: boolean; description?: string }[] = [];
  for (const name of Object.keys(operation.security?.[0] ?? {})) {
    const scheme = schemes[name];
    if (scheme?.type === 'apiKey' && scheme.in === 'header' && scheme.name) header.push({ key: scheme.name, value: `{{${name}}}` });
  }
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'header') continue;
    const value = VARIABLES[parameter.name] ?? String(parameter.example ?? '');
    header.push({ key: parameter.name, value, ...(parameter.required ? {} : { disabled: true }), ...(parameter.description ? { description: parameter.description } : {}) });
  }
  const pathParameters = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => ({ key: p.name, value: '', description: p.description ?? '' }));
  const segments = path.split('/').filter(Boolean).map((segment) => segment.replace(/^\{(.+)\}$/, ':$1'));
  const body = exampleBody(operation.requestBody?.content?.['application/json']);
  if (body !== undefined) header.push({ key: 'content-type', value: 'application/json' });
  return {
    name: operation.summary ?? operation.operationId ?? `${method.toUpperCase()} ${path}`,
    request: {
      method: method.toUpperCase(),
      ...(operation.description ? { description: operation.description } : {}),
      header,
      url: { raw: `{{baseUrl}}/${segments.join('/')}`, host: ['{{baseUrl}}'], path: segments, ...(pathParameters.length ? { variable: pathParameters } : {}) },
      ...(body !== undefined ? { body: { mode: 'raw', raw: body, options: { raw: { language: 'json' } } } } : {}),
      // Operations without credentials (health) say so; the others inherit the collection's bearer token.
      ...(operation.security?.length ? {} : { auth: { type: 'noauth' } }),
    },
  };
}

/** The collection; `countryCode` is a country of the deployment's region, the credentials are left to fill in. */
export function postmanCollection(document: OpenApiDocument, preset: { countryCode: string }) {
  const folders = new Map<string, ReturnType<typeof request>[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      folders.set(tag, [...(folders.get(tag) ?? []), request(document, path, method, operation)]);
    }
  }
  return {
    info: { name: document.info.title, description: document.info.description ?? '', schema: POSTMAN_SCHEMA },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{accessToken}}', type: 'string' }] },
    event: [{ listen: 'prerequest', script: { type: 'text/javascript', exec: MESSAGE_ID_SCRIPT } }],
    variable: [
      { key: 'baseUrl', value: document.servers?.[0]?.url ?? '' },
      { key: 'accessToken', value: '' },
      { key: 'serviceId', value: '' },
      { key: 'serviceKey', value: '' },
      { key: 'countryCode', value: preset.countryCode },
    ],
    item: [...folders].map(([name, items]) => ({ name, item: items })),
  };
}
