/** Tool-call ids for backends that do not send one; clients need them to pair results with calls. */
export function newToolCallId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let id = "call_";
  for (const b of bytes) id += alphabet[b % alphabet.length];
  return id;
}
