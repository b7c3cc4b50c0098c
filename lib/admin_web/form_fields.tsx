/**
 * @module The admin page's form controls. Each field is named after the CLI flag it stands for (see
 * `console_form.ts`); in an edit form it also carries the value it showed, so the server can tell what the
 * admin changed.
 */
import { type ComponentChildren, createContext } from "preact";
import { useContext } from "preact/hooks";

/** The form just refused, so the answer page shows what the admin typed there instead of losing it. */
export const RefusedForm = createContext<URLSearchParams | undefined>(undefined);
/** Set inside the refused form itself: its fields show the draft instead of the stored values. */
const Draft = createContext<URLSearchParams | undefined>(undefined);

function drafted(name: string, shown: string): string {
  const draft = useContext(Draft);
  return draft ? draft.getAll(name).join("\n") : shown;
}

export interface FieldProps {
  label: string;
  name: string;
  value?: string | number;
  /** An edit form: the shown value is sent back as `was:NAME`. */
  edit?: boolean;
  type?: "text" | "password";
  placeholder?: string;
}

const text = (value: string | number | undefined) => value === undefined ? "" : String(value);

function Was(props: { name: string; value: string; edit?: boolean }) {
  return props.edit ? <input type="hidden" name={`was:${props.name}`} value={props.value} /> : null;
}

export function Field(props: FieldProps) {
  // "new-password": browsers ignore "off" on password fields and would fill in the saved admin token.
  const common = { name: props.name, placeholder: props.placeholder, autocomplete: "off" };
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.type === "password"
        ? <input type="password" {...common} autocomplete="new-password" />
        : <input type="text" value={drafted(props.name, text(props.value))} {...common} />}
      <Was name={props.name} value={text(props.value)} edit={props.edit} />
    </label>
  );
}

export function ListField(props: Omit<FieldProps, "value" | "type"> & { values?: string[] }) {
  const value = (props.values ?? []).join("\n");
  return (
    <label class="field wide">
      <span>{props.label}</span>
      <textarea name={props.name} rows={2} placeholder={props.placeholder}>
        {drafted(props.name, value)}
      </textarea>
      <Was name={props.name} value={value} edit={props.edit} />
    </label>
  );
}

export function TextArea(props: Omit<FieldProps, "type">) {
  return (
    <label class="field wide">
      <span>{props.label}</span>
      <textarea name={props.name} rows={3} placeholder={props.placeholder}>
        {drafted(props.name, text(props.value))}
      </textarea>
      <Was name={props.name} value={text(props.value)} edit={props.edit} />
    </label>
  );
}

/** The hidden `off` goes first: a ticked box sends `off` then `on`, and the last value wins. */
export function Check(props: { label: string; name: string; checked?: boolean; edit?: boolean }) {
  const draft = useContext(Draft);
  const checked = draft ? draft.getAll(props.name).at(-1) === "on" : props.checked;
  return (
    <label class="check">
      <input type="hidden" name={props.name} value="off" />
      <input type="checkbox" name={props.name} value="on" checked={checked} />
      <span>{props.label}</span>
      <Was name={props.name} value={props.checked ? "on" : "off"} edit={props.edit} />
    </label>
  );
}

export function Select(props: FieldProps & { options: string[]; blank?: string }) {
  const value = text(props.value);
  const chosen = drafted(props.name, value);
  return (
    <label class="field">
      <span>{props.label}</span>
      <select name={props.name}>
        {props.blank !== undefined ? <option value="">{props.blank}</option> : null}
        {props.options.map((option) => (
          <option key={option} value={option} selected={option === chosen}>{option}</option>
        ))}
      </select>
      <Was name={props.name} value={value} edit={props.edit} />
    </label>
  );
}

/** Where each noun's forms post: the page of its section, which answers with that page again. */
export const SECTION_PATH: Record<string, string> = {
  key: "/admin/keys",
  server: "/admin/servers",
  cluster: "/admin/servers",
  user: "/admin/users",
};

/**
 * A form running one admin command (`key.rotate`), with the session's form token and the record it acts on.
 */
export function ActionForm(
  props: {
    command: string;
    csrf: string;
    target?: string;
    children: ComponentChildren;
    class?: string;
    /** The page to answer with, when not the section's list (a record's own page). */
    action?: string;
  },
) {
  const action = props.action ?? SECTION_PATH[props.command.split(".")[0]];
  const refused = useContext(RefusedForm);
  const mine = refused?.get("do") === props.command && (refused.get("target") ?? undefined) === props.target;
  return (
    <form method="post" action={action} class={props.class ?? "action"} data-command={props.command}>
      <input type="hidden" name="csrf" value={props.csrf} />
      <input type="hidden" name="do" value={props.command} />
      {props.target !== undefined ? <input type="hidden" name="target" value={props.target} /> : null}
      <Draft.Provider value={mine ? refused : undefined}>{props.children}</Draft.Provider>
    </form>
  );
}
