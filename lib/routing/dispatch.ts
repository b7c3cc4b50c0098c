/**
 * @module Failover: tries candidates in order until one answers. A retryable failure moves on to the next
 * server; anything else (the request itself was refused, an image sent to a text-only model) ends at once.
 * When every candidate failed, the client learns what kind of failure it was, never a backend address.
 */
import { BadGateway, GatewayError, NoHealthyServer } from "../errors.ts";
import type { Candidate } from "./candidates.ts";

export interface Attempt<T> {
  value: T;
  candidate: Candidate;
}

export async function dispatch<T>(
  model: string,
  candidates: Candidate[],
  call: (candidate: Candidate) => Promise<T>,
): Promise<Attempt<T>> {
  if (candidates.length === 0) throw new NoHealthyServer(`No server is available for model "${model}"`);
  const failures: GatewayError[] = [];
  for (const candidate of candidates) {
    try {
      return { value: await call(candidate), candidate };
    } catch (error) {
      if (!(error instanceof GatewayError) || !error.retryable) throw error;
      failures.push(error);
    }
  }
  if (failures.some((f) => f instanceof BadGateway)) {
    throw new BadGateway(`Every server for model "${model}" answered with an invalid response`, false);
  }
  const reasons = [...new Set(failures.map((f) => f.message))].join("; ");
  throw new NoHealthyServer(`All ${candidates.length} server(s) for model "${model}" failed: ${reasons}`);
}
