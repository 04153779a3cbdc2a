import { describe, expect, it } from 'vitest';
import { csrfField, csrfMatches, csrfToken } from '../../src/web/csrf.js';
import { html, page, raw } from '../../src/web/html.js';

describe('html', () => {
  it('escapes interpolated text, keeps Html, joins arrays and leaves out empty values', () => {
    const name = '<script>alert("x")</script>&\'';
    const items = ['a', 'b'].map((item) => html`<li>${item}</li>`);
    expect(html`<p title="${name}">${name}</p><ul>${items}</ul>${null}${undefined}${false}${raw('<hr>')}`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p><ul><li>a</li><li>b</li></ul><hr>',
    );
  });

  it('renders a whole page with its title escaped and no resource from elsewhere', () => {
    const text = page({ title: 'A & B', body: html`<p>hi</p>` });
    expect(text).toMatch(/^<!doctype html>/);
    expect(text).toContain('<title>A &amp; B · appliance-cloud</title>');
    expect(text).not.toMatch(/https?:\/\//);
    expect(text).toContain('<link rel="icon" type="image/svg+xml" href="/docs/static/theme/logo.svg">');
  });
});

describe('csrf', () => {
  it('accepts the token of its own session only', () => {
    const token = csrfToken('key', 'session-1');
    expect(csrfMatches('key', 'session-1', token)).toBe(true);
    expect(csrfMatches('key', 'session-2', token)).toBe(false);
    expect(csrfMatches('other-key', 'session-1', token)).toBe(false);
    expect(csrfMatches('key', 'session-1', undefined)).toBe(false);
    expect(csrfMatches('key', 'session-1', token.slice(1))).toBe(false);
  });

  it('renders the hidden field', () => {
    expect(csrfField('key', 's').text).toBe(`<input type="hidden" name="_csrf" value="${csrfToken('key', 's')}">`);
  });
});
