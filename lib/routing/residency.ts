/**
 * @module Which models a server holds in memory, as best the gateway knows: what its last `/api/ps` said,
 * corrected at once by what the gateway itself sent since (a model sent is loaded by then, and on a server
 * seen holding at most N models, loading one more pushes out the least recently used, as Ollama does).
 * Probes come every few seconds; requests come every few milliseconds, so without the correction the
 * scheduler would route on a picture several seconds old.
 */
import { canonicalModel } from "./canonical_model.ts";

export class Residency {
  /** Models believed loaded, least recently used first; undefined until anything is known. */
  #models?: Map<string, true>;
  /** The most models the server was ever seen holding: its memory, as far as anyone can tell. */
  #capacity = 0;
  /** Whether the server ever told what it holds; until then only what was sent is known. */
  #told = false;
  /** The model last moved to the end of `#models` by `sent`. */
  #last?: string;

  /** What `/api/ps` listed; models answering requests right now stay, whatever a racing probe said. */
  probed(loaded: readonly string[], busy: (model: string) => boolean): void {
    const next = new Map<string, true>();
    for (const m of this.#models?.keys() ?? []) if (busy(m)) next.set(m, true);
    for (const m of loaded) next.set(canonicalModel(m), true);
    this.#models = next;
    this.#last = undefined;
    this.#told = true;
    this.#capacity = Math.max(this.#capacity, loaded.length);
  }

  /** The gateway sent `model` there: it is loaded now, and most recently used. */
  sent(model: string): void {
    const m = canonicalModel(model);
    const models = this.#models ??= new Map();
    // Already the most recent: moving it to the end would change nothing but make the map rebuild its table.
    if (m === this.#last && models.has(m)) return;
    this.#last = m;
    models.delete(m);
    models.set(m, true);
    if (this.#capacity === 0) return;
    while (models.size > this.#capacity) models.delete(models.keys().next().value!);
  }

  /**
   * true or false where it is known, undefined where it is not: a server that never answered /api/ps may
   * hold any model, so only what was sent there is certain.
   */
  has(model: string): boolean | undefined {
    if (this.#models?.has(canonicalModel(model))) return true;
    return this.#told ? false : undefined;
  }

  /**
   * Whether loading one more model would push another one out: never on a server holding nothing; with
   * unknown memory, assume it would.
   */
  get full(): boolean {
    const held = this.#models?.size ?? 0;
    return held > 0 && (this.#capacity === 0 || held >= this.#capacity);
  }

  list(): string[] | undefined {
    return this.#models && [...this.#models.keys()];
  }
}
