/** Turns a zod failure into one sentence that names the offending field, e.g. `"messages[0].role" must be …`. */
import type { z } from "zod";

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}

export function describeZodError(error: z.ZodError): string {
  return describeIssue(error.issues[0]);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = JSON.stringify(fieldPath(issue.path));
  switch (issue.code) {
    case "invalid_type":
      return `${field} must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`;
    case "invalid_union": {
      // The branch that got furthest into the value is the one the client meant: name the field inside it.
      const deepest = issue.errors.map((branch) => branch[0]).filter((first) => first?.path.length)
        .sort((a, b) => b.path.length - a.path.length)[0];
      return deepest
        ? describeIssue({ ...deepest, path: [...issue.path, ...deepest.path] })
        : `${field} has an invalid type or value`;
    }
    case "invalid_value":
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      return issue.origin === "array" && issue.minimum === 1
        ? `${field} must be a non-empty array`
        : `${field} is too small (minimum ${issue.minimum})`;
    case "too_big":
      return `${field} is too large (maximum ${issue.maximum})`;
    case "custom":
      return `${field} ${issue.message}`;
    case "unrecognized_keys":
      return `${field} has unknown fields ${issue.keys.join(", ")}`;
    default:
      return `${field}: ${issue.message}`;
  }
}
