/**
 * @module Reading an admin page form as the command-line flags of the same command, so the page is validated
 * and refused by the CLI's own code. Fields are named after flags. Edit forms also carry each field's shown
 * value as `was:FLAG`: only fields the admin changed become flags, and a field emptied there clears the
 * setting (the CLI's `none`). Checkboxes come with a hidden `off` before them, so unticking one is seen.
 */
import type { Verb } from "../admin/command.ts";
import { NONE, type RawFlags } from "../admin/flags.ts";

/** Fields every record needs; emptying them is a mistake the command reports, not a way to clear them. */
const REQUIRED = new Set(["model", "url", "weight", "kind"]);

/** Off switches besides `--no-X`. */
const OFF_SWITCH: Record<string, string> = { enabled: "disabled" };

function offFlag(verb: Verb, flag: string): string | undefined {
  const off = OFF_SWITCH[flag] ?? `no-${flag}`;
  return Object.hasOwn(verb.flags, off) ? off : undefined;
}

/** Lists are typed one entry per line (or separated by commas or spaces), or ticked as checkboxes. */
function listItems(form: URLSearchParams, flag: string): string[] {
  return form.getAll(flag).flatMap((raw) => raw.split(/[\s,]+/)).filter((item) => item !== "");
}

export function formFlags(verb: Verb, form: URLSearchParams): RawFlags {
  const flags: RawFlags = {};
  const editing = (flag: string) => form.has(`was:${flag}`);
  for (const [flag, spec] of Object.entries(verb.flags)) {
    const was = form.get(`was:${flag}`);
    if (spec.type === "boolean") {
      const value = form.getAll(flag).at(-1);
      if (value === undefined || value === was) continue;
      if (value === "on") flags[flag] = true;
      else if (value === "off") {
        const off = offFlag(verb, flag);
        if (off) flags[off] = true;
      }
      continue;
    }
    if (spec.multiple) {
      if (!form.has(flag) && !editing(flag)) continue;
      const items = listItems(form, flag);
      if (editing(flag) && items.join(",") === listItems(form, `was:${flag}`).join(",")) continue;
      if (items.length) flags[flag] = items;
      else if (editing(flag)) flags[flag] = REQUIRED.has(flag) ? [] : [NONE];
      continue;
    }
    const raw = form.get(flag);
    if (raw === null || raw === was) continue;
    if (raw.trim() === "") {
      if (editing(flag)) flags[flag] = REQUIRED.has(flag) ? raw : NONE;
      continue;
    }
    flags[flag] = raw;
  }
  return flags;
}
