/** @module A key's policy as form fields: blank for a new key, or the key's values in its edit form. */
import type { KeyRecord } from "../store/records.ts";
import { Check, Field, ListField, Select, TextArea } from "./form_fields.tsx";

const CAPABILITIES: [string, string, keyof KeyRecord][] = [
  ["tools", "Tools", "tools"],
  ["vision", "Vision", "vision"],
  ["thinking", "Thinking", "thinking"],
  ["force-json", "Force JSON", "forceJson"],
];

/** The policy fields, blank for a new key, or showing `key` (and reporting changes) in its edit form. */
export function PolicyFields(props: { record?: KeyRecord; clusters: string[]; users: string[] }) {
  const k = props.record;
  const edit = k !== undefined;
  return (
    <>
      <div class="fields">
        <Field label="Model" name="model" value={k?.model} edit={edit} placeholder="llama3.1:8b" />
        <Field label="Name" name="name" value={k?.name} edit={edit} />
        <Select
          label="Cluster"
          name="cluster"
          value={k?.cluster}
          edit={edit}
          options={props.clusters}
          blank="any"
        />
        <Select label="User" name="user" value={k?.user} edit={edit} options={props.users} blank="none" />
        <Field
          label="Expires (ISO 8601)"
          name="expires"
          value={k?.expiresAt}
          edit={edit}
          placeholder="2026-12-31"
        />
        <Field label="Requests per minute" name="rpm" value={k?.rpm} edit={edit} />
        <Field label="Daily tokens" name="daily-tokens" value={k?.dailyTokens} edit={edit} />
        <Field label="Weekly tokens" name="weekly-tokens" value={k?.weeklyTokens} edit={edit} />
        <Field label="Monthly tokens" name="monthly-tokens" value={k?.monthlyTokens} edit={edit} />
        <Field label="Max concurrent" name="max-concurrent" value={k?.maxConcurrent} edit={edit} />
        <Field label="Max context" name="max-ctx" value={k?.maxCtx} edit={edit} />
        <Field label="Max predict" name="max-predict" value={k?.maxPredict} edit={edit} />
        <Field label="Default context" name="default-ctx" value={k?.defaultCtx} edit={edit} />
        <Field label="Default predict" name="default-predict" value={k?.defaultPredict} edit={edit} />
      </div>
      <div class="fields">
        <ListField label="Allowed IPs / CIDRs" name="allow-ip" values={k?.allowIps} edit={edit} />
        <ListField label="Allowed domains" name="allow-domain" values={k?.allowDomains} edit={edit} />
        <TextArea label="System prompt" name="system-prompt" value={k?.systemPrompt} edit={edit} />
      </div>
      <div class="checks">
        {CAPABILITIES.map(([flag, label, field]) => (
          <Check key={flag} label={label} name={flag} checked={k?.[field] === true} edit={edit} />
        ))}
      </div>
    </>
  );
}
