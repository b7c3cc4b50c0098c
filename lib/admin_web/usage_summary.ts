/**
 * @module The admin page's usage figures: requests and tokens per key and per user for the current day, week
 * and month, the busiest keys, and the latest partial or failed requests and the latest refused ones.
 *
 * Every request lands in exactly one key row (a listed key, the other keys, or no key) and one user row (a
 * user, no user, or no key), so each table adds up to the totals.
 *
 * They come from the ledger rows, which every gateway process writes, so the page shows the whole fleet, not
 * this process. The first read scans the rows from the earliest current period's start; later reads only
 * scan the last few seconds again, because a row is committed up to a group-commit interval (or a retry)
 * after its id was drawn and may land behind rows already read. Ids seen in that overlap are remembered so
 * nothing is counted twice.
 */
import { decodeTime, encodeTime } from "ulid";
import { getKey } from "../store/keys.ts";
import { PERIOD_NAMES, periodKeys, type PeriodName, periodStarts, type UsageRecord } from "../usage/mod.ts";
import { type LedgerRow, rowRecords, USAGE_PREFIX } from "../usage/kv_layout.ts";
import type { RecentProblem, Tally, UsageRow, UsageView } from "./shared/views.ts";

/** How far back each refresh scans again for rows committed late. */
const OVERLAP_MS = 5_000;
const TOP_KEYS = 20;
const RECENT_PROBLEMS = 20;

type Tallies = Record<PeriodName, Tally>;

const emptyTally = (): Tally => ({ requests: 0, failed: 0, promptTokens: 0, completionTokens: 0 });
const emptyTallies = (): Tallies => ({ day: emptyTally(), week: emptyTally(), month: emptyTally() });

export class UsageSummary {
  #keys = new Map<string, { user?: string; tallies: Tallies }>();
  #users = new Map<string, Tallies>();
  #totals = emptyTallies();
  #noKey = emptyTallies();
  #noUser = emptyTallies();
  #recent: RecentProblem[] = [];
  #rejected: RecentProblem[] = [];
  #labels?: Record<PeriodName, string>;
  #seen = new Map<string, number>();
  #scanFrom = 0;
  #labelCache = new Map<string, string>();
  #refreshing?: Promise<void>;

  constructor(private readonly kv: Deno.Kv, private readonly now: () => number = Date.now) {}

  /** Brings the figures up to date; concurrent callers share one scan. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#scan().finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  async view(): Promise<UsageView> {
    await this.refresh();
    const top = [...this.#keys.entries()]
      .sort(([, a], [, b]) =>
        tokens(b.tallies.month) - tokens(a.tallies.month) || b.tallies.month.requests -
          a.tallies.month.requests
      );
    const rest = top.splice(TOP_KEYS);
    const keys: UsageRow[] = await Promise.all(top.map(async ([id, entry]) => ({
      id,
      label: await this.#keyLabel(id),
      user: entry.user,
      ...entry.tallies,
    })));
    const users: UsageRow[] = [...this.#users.entries()]
      .sort(([a], [b]) => a < b ? -1 : 1)
      .map(([name, tallies]) => ({ id: name, label: name, ...tallies }));
    const otherKeys = rest.length === 0 ? undefined : emptyTallies();
    for (const [, entry] of rest) addTallies(otherKeys!, entry.tallies);
    return {
      periods: this.#labels!,
      totals: this.#totals,
      keys,
      otherKeys,
      noKey: this.#noKey,
      users,
      noUser: this.#noUser,
      recent: await this.#labelled(this.#recent),
      rejected: await this.#labelled(this.#rejected),
    };
  }

  #labelled(rows: RecentProblem[]): Promise<RecentProblem[]> {
    return Promise.all(
      rows.map(async (r) => r.keyId === undefined ? { ...r } : { ...r, key: await this.#keyLabel(r.keyId) }),
    );
  }

  async #scan(): Promise<void> {
    const now = new Date(this.now());
    const labels = periodKeys(now);
    if (!this.#labels || PERIOD_NAMES.some((p) => labels[p] !== this.#labels![p])) this.#restart(now, labels);
    const start: Deno.KvKey = [USAGE_PREFIX, encodeTime(Math.max(0, this.#scanFrom))];
    const nextFrom = Math.max(this.#scanFrom, now.getTime() - OVERLAP_MS);
    for await (const entry of this.kv.list<LedgerRow>({ prefix: [USAGE_PREFIX], start })) {
      const id = entry.key[1] as string;
      if (this.#seen.has(id)) continue;
      // Only rows the next scan reads again need remembering.
      const time = decodeTime(id);
      if (time >= nextFrom) this.#seen.set(id, time);
      for (const rec of rowRecords(entry.value)) this.#add(rec);
    }
    this.#scanFrom = nextFrom;
    for (const [id, time] of this.#seen) if (time < this.#scanFrom) this.#seen.delete(id);
  }

  /** A new day (week, month) began: the figures start over from the earliest current period. */
  #restart(now: Date, labels: Record<PeriodName, string>): void {
    this.#labels = labels;
    this.#keys.clear();
    this.#users.clear();
    this.#totals = emptyTallies();
    this.#noKey = emptyTallies();
    this.#noUser = emptyTallies();
    this.#recent = [];
    this.#rejected = [];
    this.#seen.clear();
    const starts = periodStarts(now);
    this.#scanFrom = Math.min(starts.week, starts.month);
  }

  #add(rec: UsageRecord): void {
    const recLabels = periodKeys(new Date(rec.time));
    const current = PERIOD_NAMES.filter((p) => recLabels[p] === this.#labels![p]);
    if (current.length === 0) return;
    const targets = [this.#totals];
    if (rec.keyId === undefined) targets.push(this.#noKey);
    else {
      let entry = this.#keys.get(rec.keyId);
      if (!entry) this.#keys.set(rec.keyId, entry = { user: rec.user, tallies: emptyTallies() });
      targets.push(entry.tallies);
      if (rec.user === undefined) targets.push(this.#noUser);
    }
    if (rec.user !== undefined) {
      let tallies = this.#users.get(rec.user);
      if (!tallies) this.#users.set(rec.user, tallies = emptyTallies());
      targets.push(tallies);
    }
    const failed = rec.status !== "ok";
    // A folded row stands for several refusals of one key and reason (`refusal_fold.ts`).
    const n = rec.count ?? 1;
    for (const tallies of targets) {
      for (const period of current) {
        const t = tallies[period];
        t.requests += n;
        if (failed) t.failed += n;
        t.promptTokens += rec.promptTokens;
        t.completionTokens += rec.completionTokens;
      }
    }
    if (rec.status === "partial" || rec.status === "error") noteProblem(this.#recent, rec);
    else if (rec.status === "rejected") noteProblem(this.#rejected, rec);
  }

  async #keyLabel(id: string): Promise<string> {
    let label = this.#labelCache.get(id);
    if (label === undefined) {
      try {
        const key = await getKey(this.kv, id);
        label = key.name ? `${key.name} (${key.hint})` : key.hint;
      } catch {
        label = id;
      }
      this.#labelCache.set(id, label);
    }
    return label;
  }
}

function tokens(t: Tally): number {
  return t.promptTokens + t.completionTokens;
}

function addTallies(into: Tallies, from: Tallies): void {
  for (const period of PERIOD_NAMES) {
    const [a, b] = [into[period], from[period]];
    a.requests += b.requests;
    a.failed += b.failed;
    a.promptTokens += b.promptTokens;
    a.completionTokens += b.completionTokens;
  }
}

/** Keeps the newest `RECENT_PROBLEMS` of `list`, newest first. */
function noteProblem(list: RecentProblem[], rec: UsageRecord): void {
  list.push({
    time: rec.time,
    keyId: rec.keyId,
    server: rec.server,
    format: rec.format,
    status: rec.status,
    httpStatus: rec.httpStatus,
    ...(rec.count === undefined ? {} : { count: rec.count }),
    code: rec.errorCode,
    tokens: rec.promptTokens + rec.completionTokens,
  });
  list.sort((a, b) => a.time < b.time ? 1 : a.time > b.time ? -1 : 0);
  list.length = Math.min(list.length, RECENT_PROBLEMS);
}
