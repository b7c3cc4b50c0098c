/**
 * @module Whether a request should have its model loaded on a free server. A load costs seconds and unloads a
 * model others use, so a request whose model is loaded elsewhere (only busy) waits for it rather than load it
 * on a free server, unless the model's demand outgrows the servers holding it (more waiting than they have
 * slots) or it has waited a quarter of its longest wait.
 */
export function coldStartPays(
  warmSlots: number,
  waiting: number,
  waitedMs: number,
  maxWaitMs: number,
): boolean {
  return warmSlots === 0 || waiting > warmSlots || waitedMs >= maxWaitMs / 4;
}
