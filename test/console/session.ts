/** Signing in to the console over app.inject, as a browser would: cookies kept, CSRF tokens read from the forms. */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN } from '../helpers/app.js';

export interface Visitor {
  cookie: string;
  get(url: string): Promise<LightMyRequestResponse>;
  /** POSTs a form with the CSRF token of the last page read (or `csrf` when given). */
  post(url: string, form: Record<string, string | string[]>, csrf?: string): Promise<LightMyRequestResponse>;
  /** GETs the page a 303 answer sends the browser to, as a browser does; throws on any other answer. */
  follow(answer: LightMyRequestResponse): Promise<LightMyRequestResponse>;
  /** The CSRF token of the last page read. */
  csrf: string;
}

function csrfOf(body: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
}

function cookieOf(response: LightMyRequestResponse): string | undefined {
  const header = response.headers['set-cookie'];
  const line = Array.isArray(header) ? header[0] : header;
  return line?.split(';')[0];
}

function encode(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

/** A visitor who opened the sign-in page: holds its anonymous session and the form's CSRF token. */
export async function visit(app: FastifyInstance): Promise<Visitor> {
  const visitor: Visitor = {
    cookie: '',
    csrf: '',
    async get(url) {
      const response = await app.inject({ method: 'GET', url, headers: { cookie: visitor.cookie } });
      visitor.cookie = cookieOf(response) ?? visitor.cookie;
      visitor.csrf = csrfOf(response.body) ?? visitor.csrf;
      return response;
    },
    async post(url, form, csrf) {
      const response = await app.inject({
        method: 'POST',
        url,
        headers: { cookie: visitor.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: encode({ _csrf: csrf ?? visitor.csrf, ...form }),
      });
      visitor.cookie = cookieOf(response) ?? visitor.cookie;
      visitor.csrf = csrfOf(response.body) ?? visitor.csrf;
      return response;
    },
    async follow(answer) {
      const location = answer.headers.location;
      if (answer.statusCode !== 303 || typeof location !== 'string') throw new Error(`expected a 303, got ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
      return visitor.get(location);
    },
  };
  await visitor.get('/console/sign-in');
  return visitor;
}

/** A visitor signed in with the admin token, on the overview. */
export async function signIn(app: FastifyInstance): Promise<Visitor> {
  const visitor = await visit(app);
  const answer = await visitor.post('/console/sign-in', { token: ADMIN_TOKEN, next: '/console' });
  if (answer.statusCode !== 303) throw new Error(`sign-in answered ${answer.statusCode}`);
  await visitor.get('/console');
  return visitor;
}
