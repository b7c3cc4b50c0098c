/**
 * @module The admin page's management sections (keys, servers and clusters, users, the audit trail), each a
 * page of its own, rendered on the server with its forms. Every form answer comes back as one of these pages
 * with a notice on top: what was done, why it was refused, or a new secret shown once.
 */
import type { VNode } from "preact";
import CopySecret from "./islands/CopySecret.tsx";
import type { Deps } from "../deps.ts";
import { Island } from "./island.tsx";
import { RefusedForm } from "./form_fields.tsx";
import { Document, TopBar } from "./pages.tsx";
import { adminServices } from "./services.ts";
import { keysSection } from "./keys_section.tsx";
import { serversSection } from "./servers_section.tsx";
import { usersSection } from "./users_section.tsx";
import { auditSection } from "./audit_section.tsx";
import { type MetricsRead, metricsSection, readMetrics } from "./metrics_section.tsx";
import type { HealthView } from "./shared/views.ts";
import type { BreakerSettings } from "./shared/health_legend.tsx";

export type Section = "keys" | "servers" | "users" | "audit" | "metrics";

export type Notice =
  | { kind: "done"; text: string }
  | { kind: "error"; text: string; form?: URLSearchParams }
  | { kind: "secret"; text: string; secret: string; until?: string };

/** What a section renders from: the store, the clock, the session's form token and the servers' state. */
export interface SectionContext {
  kv: Deno.Kv;
  now: Date;
  csrf: string;
  /** The page's query, for sections that show one record on a page of its own. */
  query: URLSearchParams;
  health: () => HealthView;
  breaker: BreakerSettings;
  /** This process's metrics, as Prometheus text and as prom-client's JSON; undefined when they are off. */
  metrics: () => Promise<MetricsRead | undefined>;
}

const TITLES: Record<Section, string> = {
  keys: "Keys",
  servers: "Servers and clusters",
  users: "Users",
  audit: "Audit",
  metrics: "Metrics",
};

const RENDER: Record<Section, (ctx: SectionContext) => Promise<VNode>> = {
  keys: keysSection,
  servers: serversSection,
  users: usersSection,
  audit: auditSection,
  metrics: metricsSection,
};

function NoticeBox({ notice }: { notice: Notice }) {
  if (notice.kind === "error") {
    return <p class="notice error" role="alert" data-notice="error">{notice.text}</p>;
  }
  if (notice.kind === "done") {
    return <p class="notice done" role="status" data-notice="done">{notice.text}</p>;
  }
  return (
    <div class="notice done" role="status" data-notice="secret">
      <p>{notice.text} Copy the secret now: it is not stored and will not be shown again.</p>
      <Island name="CopySecret" component={CopySecret} props={{ secret: notice.secret }} />
      {notice.until !== undefined ? <p>The previous secret keeps working until {notice.until}.</p> : null}
    </div>
  );
}

export async function sectionPage(
  section: Section,
  request: Request,
  deps: Deps,
  notice?: Notice,
): Promise<VNode> {
  const admin = adminServices(deps);
  const ctx: SectionContext = {
    kv: deps.view.kv,
    now: new Date(deps.now()),
    csrf: admin.gate.formToken(request),
    query: new URL(request.url).searchParams,
    health: admin.health,
    breaker: {
      failures: deps.config.breakerFailures,
      openMs: deps.config.breakerOpenMs,
      probeEveryMs: deps.config.probeIntervalMs,
    },
    metrics: () => readMetrics(deps),
  };
  const body = await RENDER[section](ctx);
  return (
    <Document title={`Gateway admin: ${TITLES[section]}`} script>
      <TopBar current={`/admin/${section}`} />
      <main>
        {notice ? <NoticeBox notice={notice} /> : null}
        <RefusedForm.Provider value={notice?.kind === "error" ? notice.form : undefined}>
          {body}
        </RefusedForm.Provider>
      </main>
    </Document>
  );
}
