import { describe, expect, it } from 'vitest';
import { serviceLabeller } from '../src/metrics.js';

describe('delivery metric labels', () => {
  it('name the first services seen, and count the rest as other, so that series stay bounded', () => {
    const label = serviceLabeller(2);
    expect(['svc_a', 'svc_b', 'svc_c', 'svc_a', 'svc_d'].map(label)).toEqual(['svc_a', 'svc_b', 'other', 'svc_a', 'other']);
  });
});
