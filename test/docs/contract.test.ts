/**
 * The published contract (issue 19 item 2): the served documents lint clean with Redocly's
 * recommended rules, a client generated from the partner document by openapi-typescript has typed
 * status, profile and control, the per-type schemas fit what the server really answers and sends,
 * every message of DESIGN A.8 is a webhook, and the Postman collection has every operation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandFor, DEVICE_TYPES, legalValues, listModels, listWritable, parsedProfile } from '../../src/catalog/index.js';
import { typeStem } from '../../src/docs/catalog-schemas.js';
import { POSTMAN_SCHEMA } from '../../src/docs/postman.js';
import { messageBody, type MessageSpec } from '../../src/store/messages.js';
import { adminHeaders, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

type Operation = { operationId?: string; security?: unknown; parameters?: { name: string; in: string }[] };
type Document = {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const operationsOf = (doc: Document) => Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).filter(([method]) => METHODS.has(method)).map(([method, op]) => ({ call: `${method.toUpperCase()} ${path}`, op })));

describe('the published contract', () => {
  let t: TestApp;
  let world: World;
  let doc: Document;
  let ajv: Ajv2020;
  const component = (name: string) => {
    const validate = ajv.getSchema(`doc#/components/schemas/${name}`);
    if (!validate) throw new Error(`no component ${name}`);
    return validate;
  };

  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx);
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'partner.test:8080' } });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document's own refs resolve within it.
    ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(doc, 'doc');
  }, 60_000);
  afterAll(() => t.close());

  it('lists first the server as the request reached it (https behind a TLS proxy that says so), then the public base URL', async () => {
    expect(doc.servers.map((s) => s.url)).toEqual(['http://partner.test:8080', 'https://kic-qa-ext.appliance-cloud.example']);
    const proxied = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'api.partner.test', 'x-forwarded-proto': 'https' } })).json();
    expect(proxied.servers[0].url).toBe('https://api.partner.test');
    // A chain of proxies appends its own after the first, the client's.
    const chained = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'api.partner.test', 'x-forwarded-proto': 'https, http' } })).json();
    expect(chained.servers[0].url).toBe('https://api.partner.test');
    const odd = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'a b"<x>' } })).json();
    expect(odd.servers.map((s: { url: string }) => s.url)).toEqual(['https://kic-qa-ext.appliance-cloud.example']);
  });

  it('lints with zero errors (Redocly, recommended rules), the partner and the admin document alike', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const admin = (await t.app.inject({ method: 'GET', url: '/admin/openapi.json', headers: adminHeaders() })).json();
    for (const [name, document] of [['/openapi.json', doc], ['/admin/openapi.json', admin]] as const) {
      const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: name, config });
      const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      expect(errors, name).toEqual([]);
    }
  }, 60_000);

  it('names every operation and component: unique operationIds, ErrorEnvelope, no def-N', () => {
    const operations = operationsOf(doc);
    const ids = operations.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(ids).size).toBe(operations.length);
    expect(Object.keys(doc.components.schemas)).toContain('ErrorEnvelope');
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
  });

  it('asks every partner operation for the three credentials as security schemes, leaving x-country-code and x-message-id as parameters', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      accessToken: { type: 'http', scheme: 'bearer' },
      serviceId: { type: 'apiKey', in: 'header', name: 'x-service-id' },
      serviceKey: { type: 'apiKey', in: 'header', name: 'x-service-key' },
    });
    for (const { call, op } of operationsOf(doc).filter(({ call }) => !/ \/(health|ready)$/.test(call))) {
      expect(op.security, call).toEqual([{ accessToken: [], serviceId: [], serviceKey: [] }]);
      const headers = (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      expect(headers, call).toEqual(expect.arrayContaining(['x-country-code', 'x-message-id']));
      expect(headers.filter((h) => ['authorization', 'x-service-id', 'x-service-key'].includes(h)), call).toEqual([]);
    }
  });

  it('types a relative timer of 0 (none set), below its range, as a status shows it after a STOP', async () => {
    const list = (await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).json().response as { deviceId: string; deviceInfo: { deviceType: string } }[];
    const styler = list.find((d) => d.deviceInfo.deviceType === 'DEVICE_STYLER')!.deviceId;
    const control = (stylerOperationMode: string) =>
      t.app.inject({ method: 'POST', url: `/devices/${styler}`, headers: world.headers(), payload: { operation: { stylerOperationMode } } });
    expect((await control('START')).statusCode).toBe(200);
    const stopped = (await control('STOP')).json().response;
    expect(stopped.timer.relativeHourToStop).toBe(0);
    const fitsStatus = component('StylerStatus');
    expect(fitsStatus(stopped), ajv.errorsText(fitsStatus.errors)).toBe(true);
    expect(fitsStatus({ timer: { relativeHourToStop: 2 } })).toBe(false);
  });

  it("types each device type's status, profile and command from the catalog, and they fit what the server answers", async () => {
    const list = (await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).json().response as { deviceId: string; deviceInfo: { deviceType: string } }[];
    expect(list.map((d) => d.deviceInfo.deviceType).sort()).toEqual([...DEVICE_TYPES].sort());
    for (const { deviceId, deviceInfo: { deviceType } } of list) {
      const stem = typeStem(deviceType);
      const status = (await t.app.inject({ method: 'GET', url: `/devices/${deviceId}`, headers: world.headers() })).json().response;
      const profile = (await t.app.inject({ method: 'GET', url: `/devices/profile/${deviceId}`, headers: world.headers() })).json().response;
      const fitsStatus = component(`${stem}Status`);
      expect(fitsStatus(status), `${deviceType} status: ${ajv.errorsText(fitsStatus.errors)}`).toBe(true);
      expect(component('DeviceStatus')(status), deviceType).toBe(true);
      const fitsProfile = component(`${stem}Profile`);
      expect(fitsProfile(profile), `${deviceType} profile: ${ajv.errorsText(fitsProfile.errors)}`).toBe(true);
    }
    for (const deviceType of DEVICE_TYPES) {
      const writable = listModels(deviceType).flatMap((model) => listWritable(parsedProfile(model)));
      // The water purifier takes no command (every one is 2207): there is nothing to type.
      if (writable.length === 0) {
        expect(doc.components.schemas[`${typeStem(deviceType)}Control`], deviceType).toBeUndefined();
        continue;
      }
      const fitsControl = component(`${typeStem(deviceType)}Control`);
      for (const item of writable) {
        const command = commandFor(item, legalValues(item.property)[0]);
        expect(fitsControl(command), `${deviceType} ${JSON.stringify(command)}: ${ajv.errorsText(fitsControl.errors)}`).toBe(true);
      }
      // A command may name only writable properties: a made-up resource is not one.
      expect(fitsControl({ notAResource: { x: 1 } }), deviceType).toBe(false);
    }
  }, 60_000);

  it('has a webhook for every message of DESIGN A.8, whose body schema fits what delivery sends', () => {
    const [device] = world.devices;
    const base = { serviceId: world.serviceId, deviceId: device!.deviceId };
    const specs: MessageSpec[] = [
      { ...base, pushType: 'DEVICE_REGISTERED', userNumber: world.userNumber, modelName: 'M', deviceType: device!.deviceType, alias: 'A' },
      { ...base, pushType: 'DEVICE_UNREGISTERED', userNumber: world.userNumber, deviceType: device!.deviceType, alias: 'A' },
      { ...base, pushType: 'DEVICE_ALIAS_CHANGED', userNumber: world.userNumber, alias: 'B' },
      { ...base, pushType: 'DEVICE_PUSH', pushCode: 'DOOR_IS_OPEN', deviceType: device!.deviceType, userList: [world.userNumber] },
      { ...base, pushType: 'DEVICE_STATUS', deviceType: device!.deviceType, report: { doorStatus: [{ locationName: 'MAIN', doorState: 'OPEN' }] }, userList: [world.userNumber] },
    ];
    expect(Object.keys(doc.webhooks).sort()).toEqual(specs.map((s) => s.pushType).sort());
    for (const spec of specs) {
      const ref = doc.webhooks[spec.pushType]!.post.requestBody.content['application/json'].schema.$ref;
      const validate = ajv.getSchema(`doc${ref}`)!;
      const body = JSON.parse(messageBody(spec, 'kVuV69kGTS25FUs1wrkECQ', Date.now()));
      expect(validate(body), `${spec.pushType}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(validate({ ...body, push: undefined, event: undefined }), spec.pushType).toBe(false);
    }
  });

  it('generates a client (openapi-typescript) whose status, profile and control types are not unknown', async () => {
    const source = astToString(await openapiTS(doc as never));
    const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-client-'));
    try {
      writeFileSync(join(dir, 'api.ts'), source);
      // Each line fails to compile if its type is `unknown`: `false` is not assignable to `true`.
      writeFileSync(join(dir, 'check.ts'), [
        "import type { components, operations } from './api';",
        'type Known<T> = unknown extends T ? false : true;',
        "export const status: Known<operations['getDeviceStatus']['responses'][200]['content']['application/json']['response']> = true;",
        "export const profile: Known<operations['getDeviceProfile']['responses'][200]['content']['application/json']['response']> = true;",
        "export const controlAnswer: Known<operations['controlDevice']['responses'][200]['content']['application/json']['response']> = true;",
        "export const control: Known<NonNullable<operations['controlDevice']['requestBody']>['content']['application/json']> = true;",
        "export const washer: Known<components['schemas']['WasherStatus']> = true;",
        "export const push: Known<components['schemas']['DevicePushMessage']['push']['pushCode']> = true;",
      ].join('\n'));
      const program = ts.createProgram([join(dir, 'check.ts')], { strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('offers a Postman collection (v2.1) with every operation, the credentials as variables and a fresh x-message-id script', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/postman.json', headers: { host: 'partner.test:8080' } });
    expect(res.statusCode).toBe(200);
    const collection = JSON.parse(res.body);
    expect(collection.info.schema).toBe(POSTMAN_SCHEMA);
    const requests = (collection.item as { item: { request: { method: string; url: { path: string[] }; header: { key: string; value: string }[] } }[] }[])
      .flatMap((folder) => folder.item.map((i) => i.request));
    const calls = requests.map((r) => `${r.method} /${r.url.path.join('/').replace(/:(\w+)/g, '{$1}')}`).sort();
    expect(calls).toEqual(operationsOf(doc).map((o) => o.call).sort());
    const listDevices = requests.find((r) => r.method === 'GET' && r.url.path.join('/') === 'devices')!;
    expect(Object.fromEntries(listDevices.header.map((h) => [h.key, h.value]))).toMatchObject({
      'x-service-id': '{{serviceId}}', 'x-service-key': '{{serviceKey}}', 'x-country-code': '{{countryCode}}', 'x-message-id': '{{messageId}}',
    });
    expect(collection.auth.bearer[0].value).toBe('{{accessToken}}');
    expect(collection.variable.find((v: { key: string }) => v.key === 'baseUrl').value).toBe('http://partner.test:8080');
    expect(collection.event[0].script.exec.join('\n')).toContain("pm.variables.set('messageId'");
  });
});
