/**
 * @module A bench section's end: its table printed as markdown, and its figures written with the machine they
 * were measured on to `bench/results/<file>`.
 */
import type { LoadTool } from "./load.ts";
import { machineInfo } from "./machine.ts";
import { markdownTable, type Row } from "./report.ts";

const resultsDir = new URL("../results/", import.meta.url);

export async function publishSection(
  file: string,
  { tool, started, settings, figures, table, log }: {
    tool: LoadTool;
    started: Date;
    /** What the run was asked for, where the figures do not say it themselves. */
    settings?: Record<string, number>;
    figures: unknown;
    table: Row[];
    log: (line: string) => void;
  },
): Promise<void> {
  console.log(markdownTable(table));
  await Deno.mkdir(resultsDir, { recursive: true });
  const url = new URL(file, resultsDir);
  const result = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: await machineInfo({ loadTool: tool }),
    ...(settings ? { settings } : {}),
    figures,
    table,
  };
  await Deno.writeTextFile(url, JSON.stringify(result, null, 2) + "\n");
  log(`results written to ${url.pathname}`);
}
