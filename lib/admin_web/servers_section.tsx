/**
 * @module The servers and clusters section: each server's health and capacity (live, through the feed) with
 * a legend of the states, forms to add servers and clusters and to enable, disable, edit and remove them;
 * a server is edited and removed on its own page (`server_page.tsx`).
 */
import type { ClusterRecord, ServerRecord } from "../store/records.ts";
import { Catalog } from "../store/catalog.ts";
import { RecordError } from "../store/record_error.ts";
import { ActionForm, Field, ListField } from "./form_fields.tsx";
import { HealthLegend } from "./shared/health_legend.tsx";
import { modelText, ServerFields, State } from "./server_fields.tsx";
import { serverPage, serverPath } from "./server_page.tsx";
import type { SectionContext } from "./section_pages.tsx";
import type { ServerRow as LiveRow } from "./shared/views.ts";

function ServerRow(props: { s: ServerRecord; live?: LiveRow; at: number; csrf: string }) {
  const { s, csrf } = props;
  return (
    <tr data-server-row={s.name} data-enabled={String(s.enabled)}>
      <td>
        <a href={serverPath(s.name)} class="key-name">{s.name}</a>
      </td>
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
        <a href={serverPath(s.name)} data-manage={s.name}>Manage</a>
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
  const asked = ctx.query.get("server");
  if (asked !== null) {
    const server = await catalog.servers.get(asked).catch((error) => {
      if (error instanceof RecordError) return undefined;
      throw error;
    });
    if (server) return serverPage(ctx, server);
  }
  const missing = asked === null
    ? null
    : <p class="notice error" role="alert" data-notice="error">No server named {asked}.</p>;
  const servers = await catalog.servers.list();
  const clusters = await catalog.clusters.list();
  const names = servers.map((s) => s.name);
  const health = ctx.health();
  const live = new Map(health.servers.map((row) => [row.name, row]));
  return (
    <>
      {missing}
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
