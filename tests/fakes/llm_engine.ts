/**
 * What makes an LLM server slow or fast, without a GPU: a memory for a few loaded models (loading one takes
 * time and evicts the least recently used idle one), K parallel slots with a FIFO queue behind them, prompt
 * evaluation paid only for the tokens its prefix cache does not cover (the last few conversations it served),
 * and a fixed time per generated token. The wire formats (FakeLlmOllama, FakeLlmVllm) sit on top of it, so
 * both kinds of fake server behave alike and tell the truth about themselves.
 */

export interface EngineOptions {
  /** Requests run at once (OLLAMA_NUM_PARALLEL, vLLM's batch); the rest wait in arrival order. */
  slots: number;
  /** Models held in memory at once. */
  modelMemory: number;
  loadMs: number;
  promptMsPerToken: number;
  tokenMs: number;
  /** Conversations the prefix cache remembers. */
  cacheEntries: number;
  /** Models loaded at start. */
  preloaded?: string[];
}

export interface EngineStats {
  requests: number;
  loads: number;
  promptTokens: number;
  cachedTokens: number;
  /** Tokens generated: the work done, which requests alone do not show when answers differ in length. */
  completionTokens: number;
  /** Time slots ran requests past their model's load, summed: the work as the server's clock saw it. */
  busyMs: number;
  /** Most requests ever running in slots at once, and most ever held (running and queued). */
  peakRunning: number;
  peakHeld: number;
}

interface CacheEntry {
  model: string;
  /** Cumulative hash and token count after each message. */
  hashes: number[];
  tokens: number[];
}

export interface Message {
  role: string;
  content: string;
}

export const tokensOf = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** Per message: role and text hashed onto the hash of what came before, so equal prefixes hash equal. */
function prefixHashes(messages: readonly Message[]): { hashes: number[]; tokens: number[] } {
  const hashes: number[] = [];
  const tokens: number[] = [];
  let h = 0x811c9dc5, n = 0;
  for (const m of messages) {
    const text = `${m.role}\u0000${m.content}\u0001`;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    n += tokensOf(m.content) + 4;
    hashes.push(h);
    tokens.push(n);
  }
  return { hashes, tokens };
}

const sleep = (ms: number) => ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve();

export class LlmEngine {
  readonly stats: EngineStats = {
    requests: 0,
    loads: 0,
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    busyMs: 0,
    peakRunning: 0,
    peakHeld: 0,
  };
  /** Loaded models, least recently used first. */
  readonly #resident = new Map<string, true>();
  readonly #loading = new Map<string, Promise<void>>();
  readonly #inUse = new Map<string, number>();
  readonly #queue: (() => void)[] = [];
  #cache: CacheEntry[] = [];
  /** Slots taken, counted when handed out so two arrivals in one tick cannot share one. */
  #taken = 0;
  #held = 0;
  /** While set, a request that got its slot waits here before any work (tests hold requests in place). */
  gate?: Promise<void>;

  constructor(readonly options: EngineOptions) {
    for (const m of options.preloaded ?? []) this.#resident.set(m, true);
  }

  /** Loaded models, as /api/ps tells them. */
  get loaded(): string[] {
    return [...this.#resident.keys()];
  }

  get running(): number {
    return this.#taken;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Runs one request: waits for a slot, loads the model if needed, evaluates the prompt, then calls `emit`
   * once per generated token. The answer joins the prefix cache, so the next turn finds it.
   */
  async run(
    model: string,
    messages: readonly Message[],
    outputTokens: number,
    emit: (token: string) => void,
    signal: AbortSignal,
  ): Promise<{ promptTokens: number; completionTokens: number; text: string }> {
    this.stats.requests++;
    this.#held++;
    this.stats.peakHeld = Math.max(this.stats.peakHeld, this.#held);
    this.#inUse.set(model, (this.#inUse.get(model) ?? 0) + 1);
    let slot = false;
    let since = 0;
    try {
      await this.#acquire(signal);
      slot = true;
      if (this.gate) await this.gate;
      await this.#ensureLoaded(model);
      since = performance.now();
      const prompt = prefixHashes(messages);
      const promptTokens = prompt.tokens.at(-1) ?? 0;
      const cached = this.#covered(model, prompt.hashes, prompt.tokens);
      this.stats.promptTokens += promptTokens;
      this.stats.cachedTokens += cached;
      await sleep((promptTokens - cached) * this.options.promptMsPerToken);
      const words: string[] = [];
      for (let i = 0; i < outputTokens && !signal.aborted; i++) {
        await sleep(this.options.tokenMs);
        const word = `w${(i * 7919 + promptTokens) % 997}`;
        words.push(word);
        emit(i ? ` ${word}` : word);
      }
      this.stats.completionTokens += words.length;
      const text = words.join(" ");
      this.#remember(model, [...messages, { role: "assistant", content: text }]);
      return { promptTokens, completionTokens: words.length, text };
    } finally {
      this.#held--;
      this.#inUse.set(model, (this.#inUse.get(model) ?? 1) - 1);
      if (slot) {
        if (since) this.stats.busyMs += performance.now() - since;
        this.#release();
      }
    }
  }

  #acquire(signal: AbortSignal): Promise<void> {
    if (this.#taken < this.options.slots && !this.#queue.length) {
      this.#taken++;
      this.stats.peakRunning = Math.max(this.stats.peakRunning, this.#taken);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", leave);
        resolve();
      };
      const leave = () => {
        const i = this.#queue.indexOf(go);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", leave, { once: true });
      this.#queue.push(go);
    });
  }

  /** A freed slot goes straight to the next in line, so nobody arriving later can take it first. */
  #release(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#taken--;
  }

  async #ensureLoaded(model: string): Promise<void> {
    if (this.#resident.has(model)) {
      this.#resident.delete(model);
      this.#resident.set(model, true);
      return;
    }
    const pending = this.#loading.get(model);
    if (pending) return await pending;
    while (this.#resident.size + this.#loading.size >= this.options.modelMemory && this.#resident.size) {
      // Like Ollama, a model still answering someone is not unloaded while an idle one can go.
      const idle = [...this.#resident.keys()].find((m) => !this.#inUse.get(m)) ??
        this.#resident.keys().next().value!;
      this.#resident.delete(idle);
      this.#cache = this.#cache.filter((e) => e.model !== idle);
    }
    this.stats.loads++;
    const load = sleep(this.options.loadMs).then(() => {
      this.#loading.delete(model);
      this.#resident.set(model, true);
    });
    this.#loading.set(model, load);
    await load;
  }

  #covered(model: string, hashes: number[], tokens: number[]): number {
    let best = 0;
    for (const entry of this.#cache) {
      if (entry.model !== model) continue;
      let k = Math.min(entry.hashes.length, hashes.length);
      while (k > 0 && entry.hashes[k - 1] !== hashes[k - 1]) k--;
      if (k > 0) best = Math.max(best, tokens[k - 1]);
    }
    return best;
  }

  #remember(model: string, messages: Message[]): void {
    const { hashes, tokens } = prefixHashes(messages);
    this.#cache.push({ model, hashes, tokens });
    if (this.#cache.length > this.options.cacheEntries) this.#cache.shift();
  }
}
