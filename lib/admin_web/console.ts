/**
 * @module The admin page's forms: each posts to its section's page (`/admin/keys`) naming the CLI command it
 * runs (`do=key.rotate`), which runs through `execute`, so a change made here is validated, refused and
 * audited exactly as on the command line. The answer is the section's page again, with what happened on top.
 */
import type { Deps } from "../deps.ts";
import type { Client } from "../http/client.ts";
import { commandContext, execute, NOUNS } from "../admin/execute.ts";
import { FlagReader, UsageError } from "../admin/flags.ts";
import { RecordError } from "../store/record_error.ts";
import { adminServices, pageRefusal } from "./services.ts";
import { htmlResponse } from "./pages.tsx";
import { readForm, sameOrigin } from "./form_post.ts";
import { formFlags } from "./console_form.ts";
import { type Notice, type Section, sectionPage } from "./section_pages.tsx";

/** A system prompt is the longest field; this leaves it room and still bounds a post. */
const MAX_CONSOLE_FORM_BYTES = 64 * 1024;

/** The commands each section's forms may run. */
const SECTION_NOUNS: Record<Section, string[]> = {
  keys: ["key"],
  servers: ["server", "cluster"],
  users: ["user"],
  audit: [],
  metrics: [],
};

/** `[noun, verb]` when `name` (`key.rotate`) is a command of `section`'s nouns. */
function command(section: Section, name: string): [string, string] | undefined {
  const [noun, verb, ...rest] = name.split(".");
  if (rest.length || !SECTION_NOUNS[section].includes(noun) || !Object.hasOwn(NOUNS[noun], verb)) {
    return undefined;
  }
  return [noun, verb];
}

/** Verbs whose answer is a secret, shown once on the answer page itself. */
const SHOWS_SECRET = new Set(["key.create", "key.rotate"]);

export async function consolePost(
  section: Section,
  request: Request,
  client: Client,
  deps: Deps,
): Promise<Response> {
  const { gate } = adminServices(deps);
  const access = await gate.check(request, client);
  if (access !== "ok") return pageRefusal(access);
  const refuse = (text: string, status: number) =>
    sectionPage(section, request, deps, { kind: "error", text }).then((page) => htmlResponse(page, status));
  if (!sameOrigin(request)) return refuse("This form must be sent from the admin page.", 403);
  const form = await readForm(request, deps, MAX_CONSOLE_FORM_BYTES);
  if (!form) return refuse("The form could not be read; send it from the admin page.", 400);
  if (!gate.formTokenValid(request, form.get("csrf") ?? "")) {
    return refuse(
      "This form is out of date or was not sent from the admin page; reload the page and try again.",
      403,
    );
  }
  const named = command(section, form.get("do") ?? "");
  if (!named) return refuse("This page has no such form; reload the page and try again.", 400);
  const [noun, verbWord] = named;
  const action = `${noun}.${verbWord}`;
  const verb = NOUNS[noun][verbWord];
  const ctx = commandContext(deps.view.kv, () => new Date(deps.now()));
  let notice: Notice;
  let status = 200;
  try {
    const actor = {
      kind: "page" as const,
      session: gate.sessionTag(request),
      address: gate.callerAddress(request, client),
    };
    const result = await execute(ctx, {
      action,
      verb,
      flags: new FlagReader(formFlags(verb, form)),
      operand: form.get("target") ?? "",
      actor,
    });
    // The gateway serving this page sees its own change at once, not at the next poll.
    await deps.view.refresh();
    const json = result.json as Record<string, unknown>;
    notice = SHOWS_SECRET.has(action)
      ? {
        kind: "secret",
        text: result.human.split("\n", 1)[0],
        secret: String(json.key),
        until: json.previousValidUntil as string | undefined,
      }
      : { kind: "done", text: result.human.split("\n", 1)[0] };
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof RecordError)) throw error;
    notice = { kind: "error", text: error.message.split("\n", 1)[0], form };
    status = error instanceof UsageError ? 422 : 409;
  }
  return htmlResponse(await sectionPage(section, request, deps, notice), status);
}
