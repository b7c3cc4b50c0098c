/**
 * @module One server's own page (`/admin/servers?server=NAME`): its live health and capacity, its settings,
 * and, set apart below, removing it. Edits answer with this page again; removing answers with the list.
 */
import type { ServerRecord } from "../store/records.ts";
import { ActionForm } from "./form_fields.tsx";
import { HealthLegend } from "./shared/health_legend.tsx";
import { modelText, ServerFields, State } from "./server_fields.tsx";
import type { SectionContext } from "./section_pages.tsx";

export const serverPath = (name: string) => `/admin/servers?server=${encodeURIComponent(name)}`;

export function serverPage(ctx: SectionContext, s: ServerRecord) {
  const health = ctx.health();
  const live = health.servers.find((row) => row.name === s.name);
  const here = serverPath(s.name);
  return (
    <>
      <p class="crumbs">
        <a href="/admin/servers">← All servers</a>
      </p>
      <section class="panel" aria-labelledby="server-title" data-server-page={s.name}>
        <header class="panel-head">
          <h2 id="server-title">{s.name}</h2>
          <span class="summary">
            {s.kind} · {s.url} · {s.models.map(modelText).join(", ")} · weight {s.weight}
          </span>
          <ActionForm
            command={s.enabled ? "server.disable" : "server.enable"}
            csrf={ctx.csrf}
            target={s.name}
            action={here}
            class="action inline push"
          >
            <button type="submit">{s.enabled ? "Disable" : "Enable"}</button>
          </ActionForm>
        </header>
        {live
          ? (
            <dl class="server-state">
              <div>
                <dt>Health</dt>
                <dd class="state">
                  <State part="health" live={live} at={health.at} />
                </dd>
              </div>
              <div>
                <dt>Capacity</dt>
                <dd class="state">
                  <State part="capacity" live={live} at={health.at} />
                </dd>
              </div>
            </dl>
          )
          : null}
        <HealthLegend settings={ctx.breaker} />
      </section>
      <section class="panel" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <ActionForm command="server.update" csrf={ctx.csrf} target={s.name} action={here}>
          <ServerFields record={s} />
          <button type="submit">Save changes</button>
        </ActionForm>
      </section>
      <section class="panel danger-zone" aria-labelledby="remove-title">
        <h2 id="remove-title">Remove the server</h2>
        <p>
          The gateway stops sending it requests at once and forgets its settings; clusters that list it must
          be changed first. To stop it for a while, disable it instead.
        </p>
        <ActionForm command="server.remove" csrf={ctx.csrf} target={s.name} class="action inline">
          <button type="submit" class="danger">Remove this server</button>
        </ActionForm>
      </section>
    </>
  );
}
