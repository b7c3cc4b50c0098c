/**
 * @module Failover: tries candidates in order until one answers. A retryable failure moves on to the next
 * server; anything else (the request itself was refused, an image sent to a text-only model) ends at once.
 * Each attempt holds a ticket from the live server state, which feeds the breaker and the admin's figures;
 * a server whose breaker will not take the request right now is skipped. When nothing answered, the client
 * learns what kind of failure it was, never a backend address.
 */
import { BadGateway, GatewayError, NoHealthyServer } from "../errors.ts";
import type { Candidate } from "./candidates.ts";
import { outcomeOf, type ServerState, type Ticket } from "./server_state.ts";

export interface Attempt<T> {
  value: T;
  candidate: Candidate;
  /** Still open: the caller finishes it when the answer is complete. */
  ticket: Ticket;
}

export async function dispatch<T>(
  model: string,
  candidates: Candidate[],
  servers: ServerState,
  call: (candidate: Candidate) => Promise<T>,
): Promise<Attempt<T>> {
  const failures: GatewayError[] = [];
  let skipped = 0;
  let full = 0;
  for (const candidate of candidates) {
    const { server, slots, reserved, tenant } = candidate;
    // Failover never piles onto a server that is already running all it can (in any worker).
    if (
      !reserved && slots !== undefined && !servers.reserve(server.name, slots, tenant)
    ) {
      full++;
      continue;
    }
    const ticket = servers.begin(server.name, candidate.model.tag, reserved || slots !== undefined, tenant);
    if (!ticket) {
      skipped++;
      continue;
    }
    try {
      return { value: await call(candidate), candidate, ticket };
    } catch (error) {
      servers.finish(ticket, outcomeOf(error));
      if (!(error instanceof GatewayError) || !error.retryable) throw error;
      failures.push(error);
    }
  }
  if (failures.length === 0) {
    throw new NoHealthyServer(
      skipped
        ? `All ${skipped} server(s) for model "${model}" are unavailable: ${skipped} circuit open`
        : `No server is available for model "${model}"`,
    );
  }
  if (failures.some((f) => f instanceof BadGateway)) {
    throw new BadGateway(`Every server for model "${model}" answered with an invalid response`, false);
  }
  const reasons = [...new Set(failures.map((f) => f.message))].join("; ");
  const also = (skipped ? `; ${skipped} more skipped (circuit open)` : "") +
    (full ? `; ${full} more busy` : "");
  throw new NoHealthyServer(
    `All ${failures.length} server(s) for model "${model}" failed: ${reasons}${also}`,
  );
}
