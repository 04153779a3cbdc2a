import { describe, expect, it } from 'vitest';
import { checkScope, FULL_ACCESS } from '../../src/api/access.js';
import type { ApiError } from '../../src/errors.js';

describe('checkScope', () => {
  const refusal = (scopes: string[], scope: 'devices' | 'control' | 'push' | 'events'): Pick<ApiError, 'code' | 'message'> => {
    try {
      checkScope({ scopes: new Set(scopes), deviceIds: null }, scope);
    } catch (error) {
      const { code, message } = error as ApiError;
      return { code, message };
    }
    throw new Error('not refused');
  };

  it('lets a token through with the scope, and every token where the route needs none', () => {
    expect(() => checkScope(FULL_ACCESS, 'control')).not.toThrow();
    expect(() => checkScope({ scopes: new Set(), deviceIds: null }, undefined)).not.toThrow();
  });

  it('refuses with 1308 in a sentence naming the scopes held and the one missing (DESIGN G)', () => {
    expect(refusal(['devices'], 'control')).toEqual({ code: '1308', message: 'The access token has no control authority: its scopes (devices) do not include control.' });
    expect(refusal(['devices', 'control'], 'push')).toEqual({ code: '1308', message: 'The access token cannot be used here: its scopes (devices control) do not include push.' });
    expect(refusal([], 'events')).toEqual({ code: '1308', message: 'The access token cannot be used here: its scopes (none) do not include events.' });
  });
});
