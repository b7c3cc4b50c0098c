/**
 * @module Whether a key's model is one the gateway can route: some server carries it (by tag or alias, as
 * routing matches it), inside the key's cluster when it has one. A key for a model nobody carries is shown in
 * `/v1/models` and answered 503 on every request, so creating one is refused unless the admin says `--force`
 * (a server for it is on its way). Disabled servers count: disabling one is a pause, not a removal.
 */
import type { Catalog } from "../store/catalog.ts";
import type { KeyPolicy } from "../store/records.ts";
import { RecordError } from "../store/record_error.ts";

/** A refusal names a few of the models there are, enough to spot a typo. */
const SHOWN_MODELS = 8;

export async function requireOfferedModel(
  catalog: Catalog,
  key: Pick<KeyPolicy, "model" | "cluster">,
): Promise<void> {
  let servers = await catalog.servers.list();
  if (key.cluster !== undefined) {
    const members = new Set((await catalog.clusters.get(key.cluster)).servers);
    servers = servers.filter((server) => members.has(server.name));
  }
  const names = servers.flatMap((server) =>
    server.models.flatMap((m) => m.alias ? [m.tag, m.alias] : [m.tag])
  );
  if (names.includes(key.model)) return;
  const where = key.cluster === undefined
    ? "No server"
    : `No server of cluster ${JSON.stringify(key.cluster)}`;
  const known = [...new Set(names)].sort();
  const shown = known.length > SHOWN_MODELS ? [...known.slice(0, SHOWN_MODELS), "…"] : known;
  const empty = key.cluster === undefined ? "there are no servers" : "it has no servers";
  const there = known.length ? `carried: ${shown.join(", ")}` : empty;
  throw new RecordError(
    `${where} carries model ${
      JSON.stringify(key.model)
    } (${there}); add it to a server first, or give --force`,
  );
}
