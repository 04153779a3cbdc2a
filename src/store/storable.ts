/**
 * The floor under every caller: PostgreSQL text cannot hold U+0000, so no id or value the store keeps
 * has one, and a statement naming one is refused before it is sent, as a malformed request (1000)
 * rather than the driver's failure (2000). SQLite could keep it; it refuses it too, so that both
 * stores answer alike. JSON bodies and MQTT payloads refuse it earlier (json.ts).
 */
import { fail } from '../errors.js';

export function refuseNul(params: readonly unknown[]): void {
  for (const param of params) {
    if (typeof param === 'string' ? param.includes('\0') : Array.isArray(param) && param.some((item) => typeof item === 'string' && item.includes('\0'))) {
      throw fail('1000', 'A value holds the character U+0000, which no id, name or value may contain.');
    }
  }
}

/**
 * Text from outside that the store keeps as it came, as well as it can: a partner's response
 * excerpt, a network error. A U+0000 in it (a gzip answer, a C string) would make the whole write
 * refused, so it becomes U+FFFD, as undecodable bytes already do.
 */
export function storableText(text: string | null): string | null {
  return text?.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}
