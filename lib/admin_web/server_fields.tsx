/** @module A server's fields in its forms, and its live health or capacity as an island. */
import { BACKEND_KINDS, type ServedModel, type ServerRecord } from "../store/records.ts";
import ServerState, { type StatePart } from "./islands/ServerState.tsx";
import { Check, Field, ListField, Select } from "./form_fields.tsx";
import { Island } from "./island.tsx";
import type { ServerRow as LiveRow } from "./shared/views.ts";

export const modelText = (m: ServedModel) => m.alias ? `${m.tag}=${m.alias}` : m.tag;

export function ServerFields(props: { record?: ServerRecord }) {
  const s = props.record;
  const edit = s !== undefined;
  return (
    <div class="fields">
      {edit ? null : <Field label="Name" name="name" />}
      <Field label="URL" name="url" value={s?.url} edit={edit} placeholder="http://gpu1:11434" />
      <ListField
        label="Models (TAG or TAG=ALIAS)"
        name="model"
        values={s?.models.map(modelText)}
        edit={edit}
      />
      <Select label="Kind" name="kind" value={s?.kind ?? "ollama"} edit={edit} options={[...BACKEND_KINDS]} />
      <Field label="Weight" name="weight" value={s?.weight ?? 1} edit={edit} />
      <Field label="Max context" name="max-ctx" value={s?.maxCtx} edit={edit} />
      <Field label="Max predict" name="max-predict" value={s?.maxPredict} edit={edit} />
      <Field
        label="Slots (requests at once)"
        name="slots"
        value={s?.slots}
        edit={edit}
        placeholder={edit ? "learned" : "learned if empty"}
      />
      <Field
        label="API key"
        name="api-key"
        type="password"
        placeholder={edit ? (s.apiKey === undefined ? "not set" : "set; none removes it") : ""}
      />
      {edit
        ? <Check label="Enabled" name="enabled" checked={s.enabled} edit />
        : <Check label="Disabled" name="disabled" />}
    </div>
  );
}

export function State(props: { part: StatePart; live: LiveRow; at: number }) {
  const initial = { part: props.part, initial: props.live, at: props.at };
  return <Island name="ServerState" component={ServerState} props={initial} />;
}
