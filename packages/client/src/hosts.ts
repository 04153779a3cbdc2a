/** The public base URL of a deployment (DESIGN A.1). */

export type Region = 'KIC' | 'EIC' | 'AIC';
export type Phase = 'QA' | 'OP';

/** `https://{region}-qa-ext.{domain}` in phase QA, `https://{region}-ext.{domain}` in phase OP. */
export function baseUrlOf(region: Region, phase: Phase, domain: string): string {
  return `https://${region.toLowerCase()}${phase === 'QA' ? '-qa' : ''}-ext.${domain}`;
}
