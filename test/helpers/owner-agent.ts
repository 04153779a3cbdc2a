/**
 * An owner's user agent over plain HTTP: keeps cookies, follows redirects one at a time, and fills
 * the pages' forms as a person would (the browser test drives the same pages in Chromium).
 */
export class OwnerAgent {
  readonly #cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string | string[]> } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.#cookies.size) headers.cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(init.form)) for (const one of [value].flat()) params.append(name, one);
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(new URL(url, this.base), { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return response;
  }

  /** Follows redirects from `url` until one leaves this server (its Location) or a page answers (its URL and HTML). */
  async follow(url: string, init: { form?: Record<string, string | string[]> } = {}): Promise<{ url: string; status: number; html: string }> {
    let current = new URL(url, this.base).href;
    let response = await this.request(current, init);
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      if (hops > 20) throw new Error('too many redirects');
      const next = new URL(response.headers.get('location')!, current).href;
      if (!next.startsWith(this.base)) return { url: next, status: response.status, html: '' };
      current = next;
      response = await this.request(current);
    }
    return { url: current, status: response.status, html: await response.text() };
  }

  /** Submits the page's form whose action matches, with its hidden fields and `fields`. */
  async submit(page: { url: string; html: string }, action: RegExp, fields: Record<string, string | string[]>, button?: Record<string, string>) {
    const form = [...page.html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find((m) => action.test(decode(m[1]!)));
    if (!form) throw new Error(`no form ${action} on ${page.url}:\n${page.html}`);
    const hidden: Record<string, string> = {};
    for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[input[1]!] = decode(input[2]!);
    return this.follow(new URL(decode(form[1]!), page.url).href, { form: { ...hidden, ...fields, ...button } });
  }
}

function decode(text: string): string {
  return text.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>');
}
