/**
 * An array schema that stops at its first bad element. zod's own arrays describe every bad element, so a body
 * of a few million wrong items (still under the size limit) costs seconds and gigabytes to describe and can
 * exhaust the heap; the client is only ever told the first problem.
 */
import { z } from "zod";
import { narrowedByKeys } from "./narrowed_object.ts";

export function arrayOf<T extends z.ZodType>(item: T, minLength = 0) {
  const list = minLength > 0 ? z.array(z.unknown()).min(minLength) : z.array(z.unknown());
  // An object item is parsed with its schema narrowed to the keys each element has.
  const itemFor: (value: unknown) => z.ZodType = item instanceof z.ZodObject
    ? narrowedByKeys(item as z.ZodObject<z.ZodRawShape>)
    : () => item;
  return list.transform((items, ctx) => {
    const out: z.output<T>[] = [];
    for (let i = 0; i < items.length; i++) {
      const parsed = itemFor(items[i]).safeParse(items[i]) as z.ZodSafeParseResult<z.output<T>>;
      if (!parsed.success) {
        const [first] = parsed.error.issues;
        ctx.addIssue({ ...first, path: [i, ...first.path] });
        return z.NEVER;
      }
      out.push(parsed.data);
    }
    return out;
  });
}
