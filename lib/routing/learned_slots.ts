/**
 * @module How many requests a server runs at once when nobody said (no `--slots`) and it did not show it
 * (no running-while-waiting figures): learned from what the gateway sees, so that a second server adds
 * capacity even when its admin never knew the number (Ollama does not report `OLLAMA_NUM_PARALLEL`).
 *
 * A server that runs N at once and queues the rest inside answers the (N+1)th only after one of the N ended.
 * So a request is taken as having queued there when, between its sending and its first byte, another request
 * on that server ended, and its first byte came much later than the server's usual (over twice the median of
 * its recent unqueued first bytes, plus a margin for noise). Two such requests sent with c in flight within
 * the hold time set the figure to c − 1 and keep it from growing back to c for the hold time. A request sent
 * while the figure was all in use that did not queue shows the server takes one more: the figure grows by one.
 * A request sent while the model was not loaded there says nothing (its wait was the load), and is ignored.
 *
 * The cost of learning is a request or two that waits inside a server each hold time, while the figure probes
 * one above what the server runs; everything else waits at the gateway, where a freed slot anywhere serves it.
 */

export interface LearningOptions {
  /** Where learning starts. */
  start: number;
  /** Never learned above this. */
  max: number;
  /** How long a level found queueing is not tried again, ms. */
  holdMs: number;
  /** Noise allowed above twice the usual first byte before a wait counts as queueing, ms. */
  marginMs: number;
}

/**
 * The usual figure of llama.cpp's server and LM Studio, and Ollama's automatic default before it became 1:
 * learning reaches 1 after two queued answers, and 4 lets the first few requests of a new fleet spread.
 */
export const LEARNING: LearningOptions = { start: 4, max: 64, holdMs: 30_000, marginMs: 25 };

/** What one answered request tells about its server. */
export interface Sample {
  /** Requests in flight there when it was sent, itself included. */
  level: number;
  /** Time from sending to the first byte (the whole answer, when not streamed), ms. */
  ms: number;
  /** Whether another request on the server ended in between. */
  othersEnded: boolean;
  /** Whether the model was loaded there when it was sent. */
  warm: boolean;
}

const BASE_SAMPLES = 16;

export class LearnedSlots {
  #limit: number;
  /** Recent unqueued first-byte times, a ring. */
  readonly #base = new Float64Array(BASE_SAMPLES);
  #baseSize = 0;
  #baseNext = 0;
  /** Per level: when it last queued, and whether it queued once before that within the hold time. */
  readonly #queuedAt = new Map<number, number>();
  /** Per level: until when it is not tried again. */
  readonly #heldUntil = new Map<number, number>();

  constructor(readonly options: LearningOptions = LEARNING) {
    this.#limit = Math.max(1, Math.min(options.start, options.max));
  }

  get limit(): number {
    return this.#limit;
  }

  observe(sample: Sample, now: number): void {
    if (!sample.warm) return;
    const { level, ms } = sample;
    if (sample.othersEnded && ms > 2 * this.#median() + this.options.marginMs) {
      this.#queued(level, now);
      return;
    }
    this.#addBase(ms);
    if (level >= this.#limit && level < this.options.max && now >= (this.#heldUntil.get(level + 1) ?? 0)) {
      this.#limit = level + 1;
    }
  }

  #queued(level: number, now: number): void {
    if (level <= 1) return;
    const before = this.#queuedAt.get(level);
    this.#queuedAt.set(level, now);
    if (before === undefined || now - before > this.options.holdMs) return;
    this.#queuedAt.delete(level);
    this.#heldUntil.set(level, now + this.options.holdMs);
    if (level - 1 < this.#limit) this.#limit = level - 1;
  }

  #addBase(ms: number): void {
    this.#base[this.#baseNext] = ms;
    this.#baseNext = (this.#baseNext + 1) % BASE_SAMPLES;
    if (this.#baseSize < BASE_SAMPLES) this.#baseSize++;
  }

  /** The median of the recent unqueued first bytes; 0 before any. */
  #median(): number {
    if (this.#baseSize === 0) return 0;
    const sorted = this.#base.slice(0, this.#baseSize).sort();
    return sorted[this.#baseSize >> 1];
  }
}
