/**
 * Untrusted JSON text to a value (DESIGN J), for every channel: HTTP and admin bodies, MQTT payloads.
 * The nesting depth is checked on the text before anything is built, so a value nested thousands of
 * levels deep is refused in one linear pass instead of reaching code that walks it recursively.
 * Keys such as `__proto__` and `constructor` are kept as plain own keys (JSON.parse defines them, it
 * never sets a prototype): DESIGN J makes them unknown names, which the catalog looks up in name maps.
 */

/** How deep an object or array may nest: no appliance status comes close (the deepest is 4). */
export const MAX_JSON_DEPTH = 64;

/** `\u0000` whose backslash is not itself escaped: U+0000 in a name or a value. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export class JsonTextError extends Error {
  /**
   * `message` completes a sentence about the text ("the body …"). `byRule` is true when the text may
   * be well formed but a rule of ours refuses it: too deep, or holding U+0000.
   */
  constructor(message: string, readonly byRule = false) {
    super(message);
  }
}

/** The deepest nesting of objects and arrays in `text`, giving up once it passes `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character, including a quote
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Parses JSON text; throws JsonTextError when it is malformed, nested deeper than `maxDepth`, or holds
 * U+0000, which PostgreSQL text cannot keep: refused here for every channel and both stores alike.
 */
export function parseJsonText(text: string, maxDepth: number = MAX_JSON_DEPTH): unknown {
  if (jsonDepthExceeds(text, maxDepth)) throw new JsonTextError(`nests deeper than ${maxDepth} levels`, true);
  if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) throw new JsonTextError('holds the character U+0000, which no name or value may contain', true);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonTextError(`is not valid JSON: ${(error as Error).message}`);
  }
}
