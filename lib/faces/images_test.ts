import assert from "node:assert/strict";
import { imageFromInline, imageFromUrl } from "./images.ts";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

Deno.test("images: a data URI is one in any case, as RFC 2397 has it; a remote URL is dropped", () => {
  for (const prefix of ["data:image/png;base64,", "DATA:IMAGE/PNG;BASE64,", "Data:image/png;Base64,"]) {
    assert.equal(imageFromUrl(prefix + PNG, "image_url"), PNG, prefix);
    assert.equal(imageFromInline(prefix + PNG, "images[0]"), PNG, prefix);
  }
  assert.equal(imageFromUrl("https://example.com/cat.png", "image_url"), undefined);
  assert.equal(imageFromUrl("HTTP://169.254.169.254/latest", "image_url"), undefined);
});
