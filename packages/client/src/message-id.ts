/** A fresh `x-message-id` (DESIGN A.2): a random UUID's 16 bytes as unpadded URL-safe base64, 22 characters. */
export function newMessageId(): string {
  const hex = crypto.randomUUID().replaceAll('-', '');
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return base64url(bytes);
}

/** Unpadded URL-safe base64 of some bytes (RFC 4648 §5), as PKCE and message ids use it. */
export function base64url(bytes: Uint8Array): string {
  return toBase64(bytes).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
