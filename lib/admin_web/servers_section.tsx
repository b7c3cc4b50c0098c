/**
 * @module The servers and clusters section: each server's health and capacity (live, through the feed) with
 * a legend of the states, and forms to add, edit, enable, disable and remove servers and clusters.
 */
import { BACKEND_KINDS, type ClusterRecord, type ServedModel, type ServerRecord } from "../store/records.ts";
import { Catalog } from "../store/catalog.ts";
import ServerState, { type StatePart } from "../../islands/ServerState.tsx";
import { ActionForm, Check, Field, ListField, Select } from "./form_fields.tsx";
import { HealthLegend } from "./health_legend.tsx";
import { Island } from "./island.tsx";
import type { SectionContext } from "./section_pages.tsx";
import type { ServerRow as LiveRow } from "./views.ts";

const modelText = (m: ServedModel) => m.alias ? `${m.tag}=${m.alias}` : m.tag;

function ServerFields(props: { record?: ServerRecord }) {
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

function State(props: { part: StatePart; live: LiveRow; at: number }) {
  const initial = { part: props.part, initial: props.live, at: props.at };
  return <Island name="ServerState" component={ServerState} props={initial} />;
}

function ServerRow(props: { s: ServerRecord; live?: LiveRow; at: number; csrf: string }) {
  const { s, csrf } = props;
  return (
    <tr data-server-row={s.name} data-enabled={String(s.enabled)}>
      <td>{s.name}</td>
      <td>{s.kind}</td>
      <td class="wrap">{s.url}</td>
      <td>{s.models.map(modelText).join(", ")}</td>
      <td class="num">{s.weight}</td>
      <td class="state">{props.live ? <State part="health" live={props.live} at={props.at} /> : null}</td>
      <td class="state">{props.live ? <State part="capacity" live={props.live} at={props.at} /> : null}</td>
      <td>
        <ActionForm
          command={s.enabled ? "server.disable" : "server.enable"}
          csrf={csrf}
          target={s.name}
          class="action inline"
        >
          <button type="submit">{s.enabled ? "Disable" : "Enable"}</button>
        </ActionForm>
        <details>
          <summary>Edit</summary>
          <ActionForm command="server.update" csrf={csrf} target={s.name}>
            <ServerFields record={s} />
            <button type="submit">Save changes</button>
          </ActionForm>
          <ActionForm command="server.remove" csrf={csrf} target={s.name} class="action inline">
            <button type="submit" class="danger">Remove</button>
          </ActionForm>
        </details>
      </td>
    </tr>
  );
}

function ClusterRow(props: { c: ClusterRecord; servers: string[]; csrf: string }) {
  const { c, csrf } = props;
  return (
    <tr data-cluster-row={c.name}>
      <td>{c.name}</td>
      <td>{c.servers.join(", ") || "–"}</td>
      <td>
        <details>
          <summary>Edit</summary>
          <ActionForm command="cluster.update" csrf={csrf} target={c.name}>
            <ListField
              label="Servers"
              name="server"
              values={c.servers}
              edit
              placeholder={props.servers.join("\n")}
            />
            <button type="submit">Save changes</button>
          </ActionForm>
          <ActionForm command="cluster.remove" csrf={csrf} target={c.name} class="action inline">
            <button type="submit" class="danger">Remove</button>
          </ActionForm>
        </details>
      </td>
    </tr>
  );
}

export async function serversSection(ctx: SectionContext) {
  const catalog = new Catalog(ctx.kv);
  const servers = await catalog.servers.list();
  const clusters = await catalog.clusters.list();
  const names = servers.map((s) => s.name);
  const health = ctx.health();
  const live = new Map(health.servers.map((row) => [row.name, row]));
  return (
    <>
      <section class="panel" aria-labelledby="servers-title">
        <h2 id="servers-title">Servers</h2>
        <div class="table-wrap">
          <table data-table="servers">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>URL</th>
                <th>Models</th>
                <th class="num">Weight</th>
                <th>Health</th>
                <th>Capacity</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {servers.length === 0
                ? (
                  <tr>
                    <td colSpan={8} class="empty">No servers yet.</td>
                  </tr>
                )
                : servers.map((s) => (
                  <ServerRow key={s.name} s={s} live={live.get(s.name)} at={health.at} csrf={ctx.csrf} />
                ))}
            </tbody>
          </table>
        </div>
        <HealthLegend settings={ctx.breaker} />
        <h3>Add a server</h3>
        <ActionForm command="server.add" csrf={ctx.csrf}>
          <ServerFields />
          <button type="submit">Add server</button>
        </ActionForm>
      </section>
      <section class="panel" aria-labelledby="clusters-title">
        <h2 id="clusters-title">Clusters</h2>
        <div class="table-wrap">
          <table data-table="clusters">
            <thead>
              <tr>
                <th>Name</th>
                <th>Servers</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {clusters.length === 0
                ? (
                  <tr>
                    <td colSpan={3} class="empty">No clusters yet.</td>
                  </tr>
                )
                : clusters.map((c) => <ClusterRow key={c.name} c={c} servers={names} csrf={ctx.csrf} />)}
            </tbody>
          </table>
        </div>
        <h3>Add a cluster</h3>
        <ActionForm command="cluster.add" csrf={ctx.csrf}>
          <div class="fields">
            <Field label="Name" name="name" />
            <ListField label="Servers" name="server" placeholder={names.join("\n")} />
          </div>
          <button type="submit">Add cluster</button>
        </ActionForm>
      </section>
    </>
  );
}
