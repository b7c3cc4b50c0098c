/**
 * @module The metadata exchange and the data path's credentials. A client POSTs its supported protocol
 * versions with the access token as a bearer token; it gets back the version chosen (3 if it speaks it, else 2;
 * denokv serves no other), the database's id, one strongly consistent endpoint (`/v2`), and a token of its own
 * for the data path. Every data path request must then carry that token, the id and the version.
 */
import { BadRequest } from "./schema.ts";

const SERVED_VERSIONS = [3, 2];

export class Credentials {
  readonly databaseId = crypto.randomUUID();
  /** The data path's token differs from the access token, so a client that skips the exchange is refused. */
  readonly #dataToken = crypto.randomUUID();

  constructor(private readonly accessToken: string) {}

  async exchange(request: Request): Promise<Response> {
    let supported: unknown;
    try {
      supported = (await request.json())?.supportedVersions;
    } catch {
      throw new BadRequest("The server requires at least protocol version 2.");
    }
    const version = SERVED_VERSIONS.find((v) => Array.isArray(supported) && supported.includes(v));
    if (!version) {
      throw new BadRequest("The server could not negotiate a protocol version (it serves 2 and 3).");
    }
    if (bearer(request) !== this.accessToken) throw new BadRequest("Invalid access token.", 401);
    return Response.json({
      version,
      databaseId: this.databaseId,
      endpoints: [{ url: "/v2", consistency: "strong" }],
      token: this.#dataToken,
      expiresAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
    });
  }

  /** Throws the protocol's refusal unless the request carries what the exchange handed out. */
  authorize(request: Request): void {
    const version = request.headers.get("x-denokv-version");
    if (!version || !SERVED_VERSIONS.includes(Number(version))) {
      throw new BadRequest("Expected protocol version 2 or 3.");
    }
    if (bearer(request) !== this.#dataToken) throw new BadRequest("Invalid access token.", 401);
    if (request.headers.get("x-denokv-database-id") !== this.databaseId) {
      throw new BadRequest("Invalid database id.");
    }
  }
}

function bearer(request: Request): string | undefined {
  const [scheme, token] = (request.headers.get("authorization") ?? "").split(" ", 2);
  return scheme?.toLowerCase() === "bearer" ? token : undefined;
}
