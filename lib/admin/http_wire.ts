/**
 * @module The admin HTTP API's messages, read by both ends: the gateway checks a request against them and the
 * CLI run with `--gateway` checks the answer, so neither trusts the other's shape. The OpenAPI document
 * (docs/admin-api.openapi.json) states the same schemas; a test holds the two together.
 */
import { z } from "zod";

export const COMMANDS_PATH = "/admin/api/commands";
export const OPENAPI_PATH = "/admin/api/openapi.json";

/** The body a command is sent in: the words after `deno task admin` (and after `--gateway`, `--token`). */
export const CommandRequest = z.object({
  argv: z.array(z.string()).meta({
    description: "The command line after `deno task admin`, one word per item, as a shell would split it.",
    examples: [["key", "create", "--model", "llama3.2:3b", "--json"]],
  }),
}).strict();

export const CommandSuccess = z.object({
  exitCode: z.literal(0),
  stdout: z.string().meta({
    description: "What the CLI prints on stdout: the JSON value, formatted, under `--json`; text otherwise.",
  }),
  result: z.unknown().meta({ description: "The command's JSON value, as `--json` prints it." }),
}).strict();

/** How a failed command is classed: its exit status, and the HTTP status the gateway answers it with. */
export const FAILURE_CODES = {
  /** The command line is wrong: unknown command or flag, bad value. */
  invalid_command: { exitCode: 2, status: 422 },
  /** A valid change the store refused: unknown name, duplicate, a record still in use. */
  refused: { exitCode: 1, status: 409 },
  /** Something broke while the command ran (the store failed). */
  command_failed: { exitCode: 1, status: 500 },
} as const;

export type FailureCode = keyof typeof FAILURE_CODES;

export const CommandFailure = z.object({
  exitCode: z.union([z.literal(1), z.literal(2)]),
  stderr: z.string().meta({ description: "The one line the CLI prints on stderr." }),
  error: z.object({
    message: z.string().meta({ description: "That line without the `admin: noun verb: ` it starts with." }),
    code: z.enum(Object.keys(FAILURE_CODES) as [FailureCode, ...FailureCode[]]),
  }).strict(),
}).strict();

/** Any other refusal (no or wrong token, closed, malformed body, stopping): the gateway's error shape. */
export const ErrorAnswer = z.looseObject({
  error: z.looseObject({ message: z.string(), code: z.string().nullable() }),
});

export type CommandRequest = z.infer<typeof CommandRequest>;
export type CommandSuccess = z.infer<typeof CommandSuccess>;
export type CommandFailure = z.infer<typeof CommandFailure>;

/** The schemas as the OpenAPI document's components name them. */
export const WIRE_SCHEMAS = { CommandRequest, CommandSuccess, CommandFailure, ErrorAnswer };
