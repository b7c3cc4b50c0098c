/** What a bench result was measured on, saved beside its figures so runs on different machines are told apart. */

async function cpuModel(): Promise<string | undefined> {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(await Deno.readTextFile("/proc/cpuinfo"))?.[1];
  } catch {
    return undefined;
  }
}

export async function machineInfo(extra: Record<string, unknown>) {
  return {
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    arch: Deno.build.arch,
    cpu: await cpuModel(),
    cores: navigator.hardwareConcurrency,
    memoryMb: Math.round(Deno.systemMemoryInfo().total / 1024 / 1024),
    loadAverage: Deno.loadavg(),
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    ...extra,
  };
}
