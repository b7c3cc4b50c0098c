/** Building responses: JSON bodies, and errors rendered by the face the client spoke. */
import { GatewayError, InternalError } from "../errors.ts";
import type { Face } from "../faces/mod.ts";

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(face: Face, error: unknown): Response {
  let known: GatewayError;
  if (error instanceof GatewayError) {
    known = error;
  } else {
    console.error("gateway: unexpected failure:", error);
    known = new InternalError();
  }
  return jsonResponse(face.errorBody(known), known.status, known.headers());
}
