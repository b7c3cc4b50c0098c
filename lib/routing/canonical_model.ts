/** Ollama treats `name` and `name:latest` as one model; a tag follows the last colon after the last slash. */
export function canonicalModel(tag: string): string {
  return tag.lastIndexOf(":") > tag.lastIndexOf("/") ? tag : `${tag}:latest`;
}
