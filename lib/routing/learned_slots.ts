/**
 * @module How many requests a server runs at once when nobody said (no `--slots`) and it did not show it
 * (no running-while-waiting figures): learned from what the gateway sees, so that a second server adds
 * capacity even when its admin never knew the number (Ollama does not report `OLLAMA_NUM_PARALLEL`).
 *
 * A server that runs N at once and queues the rest inside answers the (N+1)th only after one of the N ended.
 * So a request is taken as having queued there when, between its sending and its first byte, another request
 * on that server ended, and its first byte came much later than the server's usual (over twice the median of
 * its recent unqueued first bytes, plus a margin for noise), yet soon after the last end there (within that
 * same bound: it started when that end freed its slot). Sent with c in flight, it shows the server runs
 * fewer than c: the figure drops to c − 1, or to the requests streaming there when its first byte came (itself
 * included), if fewer, since a server that queues runs no more than that; and c is not tried again for the
 * hold time. One such request alone may be a pause of the gateway's own (a collection, a busy machine): it
 * counts once another one came within the hold time, unless it was sent above what streams proved the server
 * runs (below). A request sent
 * while the figure was all in use whose first byte came before anything else there ended cannot have waited
 * for a slot: the server runs one more than the figure, which grows by one. Nor can one that came quicker
 * than usual, though another ended (whole or streamed: short answers often end together); a short wait behind a
 * request that was nearly done may pass for that, letting the figure probe a level too high, where the next
 * queued request brings it back and holds that level. A request that waited for its model to load counts too
 * (while it waited nothing else ended, or something did and freed the slot it took); only the usual first
 * byte leaves out the ones that waited for a load.
 *
 * Streams give one more certainty: two streams that both had their first byte and neither ended were
 * running at the same time, so the server runs at least as many as were seen so (within the proof's life).
 * The figure never drops below that, whatever a slow first byte seemed to say: a long prompt's evaluation
 * looks like a wait, and would otherwise halve a server's figure.
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
  /** How long streams seen running at once prove the server runs that many, ms. */
  proofMs: number;
}

/**
 * The usual figure of llama.cpp's server and LM Studio, and Ollama's automatic default before it became 1:
 * learning reaches 1 after two queued answers, and 4 lets the first few requests of a new fleet spread.
 */
export const LEARNING: LearningOptions = {
  start: 1,
  max: 64,
  holdMs: 30_000,
  marginMs: 100,
  proofMs: 600_000,
};

/** What one answered request tells about its server. */
export interface Sample {
  /** Requests in flight there when it was sent, itself included. */
  level: number;
  /** Time from sending to the first byte (the whole answer, when not streamed), ms. */
  ms: number;
  /** Whether another request on the server ended in between. */
  othersEnded: boolean;
  /**
   * From the last end there that this process saw after its sending, to its first byte, ms (none: it saw
   * none, as when another worker's request ended).
   */
  sinceEndMs?: number;
  /**
   * How long of `ms` the gateway's own loop was held up, asked only of a sample that looks queued (it
   * scans the loop's recent ticks).
   */
  pausedMs?: () => number;
  /** Whether the model was loaded there when it was sent (else its first byte waited for the load). */
  warm: boolean;
  /** Streamed requests that had their first byte and had not ended when this one had its first, itself included. */
  streaming?: number;
}

const BASE_SAMPLES = 16;

export class LearnedSlots {
  #limit: number;
  /** Recent unqueued first-byte times, a ring. */
  readonly #base = new Float64Array(BASE_SAMPLES);
  #baseSize = 0;
  #baseNext = 0;
  readonly #scratch = new Float64Array(BASE_SAMPLES);
  /** The median as last sorted, over how many samples, and samples added since. */
  #usual = 0;
  #medianOf = 0;
  #addedSinceMedian = 0;
  /** Most streams seen running at once, and when. */
  #proven = 0;
  #provenAt = 0;
  /** When a request last queued, while unconfirmed. */
  #suspectedAt?: number;
  /** Per level: until when it is not tried again. */
  readonly #heldUntil = new Map<number, number>();

  constructor(readonly options: LearningOptions = LEARNING) {
    this.#limit = Math.max(1, Math.min(options.start, options.max));
  }

  get limit(): number {
    return this.#limit;
  }

  /** Takes the figure another worker of the process learned, so that what this one learns next builds on it. */
  adopt(limit: number): void {
    if (limit >= 1) this.#limit = Math.min(limit, this.options.max);
  }

  /** What streams proved the server runs, while the proof holds. */
  proven(now: number): number | undefined {
    return this.#proven >= 1 && now - this.#provenAt <= this.options.proofMs ? this.#proven : undefined;
  }

  /** `streams` were running there at once (each past its first byte, none ended). */
  sawRunning(streams: number, now: number): void {
    if (now - this.#provenAt > this.options.proofMs) this.#proven = 0;
    if (streams < this.#proven) return;
    this.#proven = Math.min(streams, this.options.max);
    this.#provenAt = now;
    if (this.#limit < this.#proven) this.#limit = this.#proven;
  }

  observe(sample: Sample, now: number): void {
    const { level, ms } = sample;
    // The usual first byte matters only when another request ended meanwhile: only then is it sorted for.
    const usual = sample.othersEnded ? this.#median() : 0;
    const late = 2 * usual + this.options.marginMs;
    // A request that queued starts once a slot frees, so its first byte follows that end as quickly as an
    // unqueued one follows its sending. One whose first byte came long after the last end was busy with its
    // own prompt: a long prompt's evaluation with an end somewhere in it is no wait.
    const soonAfterEnd = sample.sinceEndMs === undefined || sample.sinceEndMs <= late;
    // What the gateway's own pauses added is no wait at the server.
    if (sample.othersEnded && ms > late && soonAfterEnd && ms - (sample.pausedMs?.() ?? 0) > late) {
      this.#queued(level, sample.streaming ?? level - 1, now);
      return;
    }
    // A first byte that waited for a load says nothing of the server's usual.
    if (sample.warm) this.#addBase(ms);
    // After another ended, only a first byte quicker than usual is taken as no wait, streamed or not: a short
    // stream that ends as it begins is never seen running beside others, and without this its server's figure
    // would stay where it started under steady load.
    if (sample.othersEnded && ms > usual) return;
    if (level >= this.#limit && level < this.options.max && now >= (this.#heldUntil.get(level + 1) ?? 0)) {
      this.#limit = level + 1;
    }
  }

  #queued(level: number, streaming: number, now: number): void {
    if (level <= 1) return;
    const proven = now - this.#provenAt > this.options.proofMs ? 0 : this.#proven;
    const floor = Math.max(1, proven);
    // Above what streams proved, a queued one is believed at once: it cannot take the figure below the proof.
    if (proven === 0 || level <= floor) {
      const before = this.#suspectedAt;
      this.#suspectedAt = now;
      if (before === undefined || now - before > this.options.holdMs) return;
    }
    this.#heldUntil.set(level, now + this.options.holdMs);
    this.#limit = Math.max(floor, Math.min(this.#limit, level - 1, streaming));
  }

  #addBase(ms: number): void {
    this.#addedSinceMedian++;
    this.#base[this.#baseNext] = ms;
    this.#baseNext = (this.#baseNext + 1) % BASE_SAMPLES;
    if (this.#baseSize < BASE_SAMPLES) this.#baseSize++;
  }

  /** The median of the recent unqueued first bytes; 0 before any. */
  #median(): number {
    if (this.#baseSize === 0) return 0;
    // Sorted again only every few samples: it is a threshold for noise, and this runs on requests' paths.
    if (this.#addedSinceMedian >= 4 || this.#medianOf !== this.#baseSize) {
      const scratch = this.#scratch.subarray(0, this.#baseSize);
      scratch.set(this.#base.subarray(0, this.#baseSize));
      this.#usual = scratch.sort()[this.#baseSize >> 1];
      this.#addedSinceMedian = 0;
      this.#medianOf = this.#baseSize;
    }
    return this.#usual;
  }
}
