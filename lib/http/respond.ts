/** Building responses: JSON bodies, and errors rendered by the face the client spoke. */
import type { GatewayError } from "../errors.ts";
import { asGatewayError } from "../errors.ts";
import type { Face } from "../faces/mod.ts";

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(face: Face, error: unknown): Response {
  const known: GatewayError = asGatewayError(error);
  return jsonResponse(face.errorBody(known), known.status, known.headers());
}
