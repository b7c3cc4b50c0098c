/**
 * @module The admin HTTP API: `POST /admin/api/commands` runs one admin command line, sent as its words, through
 * the CLI's own `runCommandLine`, and answers with what the CLI would print and its exit status. The CLI run
 * with `--gateway` is its client; a script may call it as well. `GET /admin/api/openapi.json` describes it.
 *
 * Only a bearer token opens it, never the admin page's session cookie: a browser adds a cookie to whatever
 * another site makes it send, but not an `Authorization` header, and the path answers no CORS preflight, so no
 * other site's page can call it or read its answers. A change is audited as `api` with the caller's address
 * (the client's behind a proxy listed in `GATEWAY_TRUST_PROXY`).
 */
import type { Deps } from "../deps.ts";
import type { Client } from "../http/client.ts";
import { FACES } from "../faces/mod.ts";
import { InvalidRequest } from "../errors.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import { readJsonBody } from "../http/read_body.ts";
import { adminServices, refusal } from "./services.ts";
import { runCommandLine } from "../admin/command_line.ts";
import { CommandRequest, FAILURE_CODES, type FailureCode } from "../admin/http_wire.ts";
import document from "../../docs/admin-api.openapi.json" with { type: "json" };

/** A command line is a few hundred bytes; a long system prompt is the most it carries. */
const MAX_COMMAND_BYTES = 64 * 1024;

const NO_STORE = { "Cache-Control": "no-store" };

const PROBLEM_CODES: Record<"usage" | "refused" | "failed", FailureCode> = {
  usage: "invalid_command",
  refused: "refused",
  failed: "command_failed",
};

export async function runCommandRequest(request: Request, client: Client, deps: Deps): Promise<Response> {
  const { gate } = adminServices(deps);
  const access = await gate.check(request, client, { bearerOnly: true });
  if (access !== "ok") return refusal(access);
  let argv: string[];
  try {
    const body = await readJsonBody(request, {
      maxBodyBytes: MAX_COMMAND_BYTES,
      bodyTimeoutMs: deps.config.bodyTimeoutMs,
    });
    const parsed = CommandRequest.safeParse(body);
    if (!parsed.success) {
      throw new InvalidRequest('The body must be {"argv": [...]}: the command line\'s words, as strings');
    }
    argv = parsed.data.argv;
  } catch (error) {
    return errorResponse(FACES.openai, error, NO_STORE);
  }
  const outcome = await runCommandLine(argv, {
    kv: deps.view.kv,
    now: () => new Date(deps.now()),
    actor: { kind: "api", address: gate.callerAddress(request, client) },
  });
  if (outcome.exitCode === 0) {
    // This gateway serves the change at once, not at its next poll of the store; the others within a second.
    // The change is made either way: a failed re-read only leaves it to that poll.
    await deps.view.refresh().catch(() => {});
    return jsonResponse(outcome, 200, NO_STORE);
  }
  const code = PROBLEM_CODES[outcome.problem];
  if (outcome.problem === "failed") console.error(`admin API: ${outcome.stderr}`);
  return jsonResponse(
    { exitCode: outcome.exitCode, stderr: outcome.stderr, error: { message: outcome.reason, code } },
    FAILURE_CODES[code].status,
    NO_STORE,
  );
}

/** Serialised once: the document is part of the code, the same on every gateway of this version. */
const DOCUMENT_TEXT = JSON.stringify(document);

/** The OpenAPI document, behind the gate like every admin path (a page session may read it too). */
export async function openApiDocument(request: Request, client: Client, deps: Deps): Promise<Response> {
  const access = await adminServices(deps).gate.check(request, client);
  if (access !== "ok") return refusal(access);
  return new Response(DOCUMENT_TEXT, {
    headers: { "Content-Type": "application/json; charset=utf-8", ...NO_STORE },
  });
}
