import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';

describe('the partner document', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await testApp();
  });
  afterEach(() => t.close());

  it('has the body of POST /event/{deviceId} optional, as DESIGN A.5 does, and the control command required', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/event/{deviceId}'].post.requestBody.required).toBe(false);
    expect(doc.paths['/devices/{deviceId}'].post.requestBody.required).toBe(true);
  });
});
