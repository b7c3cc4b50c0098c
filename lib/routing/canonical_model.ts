/** The last name asked and its answer: a request asks for its one model several times. */
let lastTag = "";
let lastCanonical = ":latest";

/** Ollama treats `name` and `name:latest` as one model; a tag follows the last colon after the last slash. */
export function canonicalModel(tag: string): string {
  // A name made anew each time is a new string, hashed anew by every map it is looked up in.
  if (tag === lastTag) return lastCanonical;
  lastTag = tag;
  return lastCanonical = tag.lastIndexOf(":") > tag.lastIndexOf("/") ? tag : `${tag}:latest`;
}
