/** The figures a full run of the bench gathers, section by section, before they become rows. */

/** Whatever is named `gateway` is the gateway in format A; `gatewayB` is the same process in format B. */
export interface Figures {
  /** One connection: latency percentiles per target, µs, and what each proxy adds to the direct call. */
  single: {
    direct: { p50Us: number; p99Us: number };
    bare: { p50Us: number; p99Us: number };
    gateway: { p50Us: number; p99Us: number };
    gatewayB: { p50Us: number; p99Us: number };
    addedBare: { p50Us: number; p99Us: number };
    addedGateway: { p50Us: number; p99Us: number };
    addedGatewayB: { p50Us: number; p99Us: number };
    /** p50 over the bare proxy's, taken round by round (both saw the same machine), µs: each round's, in order. */
    overBareP50Us: { gateway: number[]; gatewayB: number[] };
  };
  /** 64 connections: requests per second and p99 latency per target; the gateway's throughput and CPU ÷ bare. */
  loaded: {
    connections: number;
    /** cpuUsPerRequest: CPU time of the target's own process per request (direct: the backend's). */
    direct: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    bare: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    gateway: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    gatewayB: { requestsPerSec: number; p99Us: number; cpuUsPerRequest: number };
    gatewayToBare: number;
    gatewayBToBare: number;
    /** CPU per request ÷ the bare proxy's. */
    gatewayCpuToBare: number;
    gatewayBCpuToBare: number;
  };
  streaming: {
    directFirstByteUs: number;
    bareFirstByteUs: number;
    gatewayFirstByteUs: number;
    gatewayBFirstByteUs: number;
    /** First byte minus the direct one's. */
    gatewayOverheadUs: number;
    gatewayBOverheadUs: number;
    /** First byte minus the bare proxy's. */
    gatewayOverBareUs: number;
    gatewayBOverBareUs: number;
    directChunksPerSec: number;
    gatewayChunksPerSec: number;
    /** The gateway process's CPU time per chunk of a long streamed answer. */
    gatewayCpuUsPerChunk: number;
  };
  /** Format B's figure ÷ format A's, each taken within a round, then the median. */
  formatBToA: { requestsPerSec: number; cpuUsPerRequest: number; addedP50Us: number; firstByteUs: number };
  /** gatewayPeakTargetMb: the bound the gateway's peak is held to, from the bare proxy's measured peak. */
  memory: { gatewayPeakRssMb: number; bareProxyPeakRssMb: number; gatewayPeakTargetMb: number };
  /** The bare proxy with each upstream client: throughput, CPU per request, throughput ÷ the fetch proxy's. */
  upstream: Record<string, { requestsPerSec: number; cpuUsPerRequest: number; toFetch: number }>;
  /** Streamed chats at full concurrency for a long run: resident memory early and at the end. */
  soak: {
    seconds: number;
    connections: number;
    gateway: { requests: number; rssAt10sMb: number; rssEndMb: number };
    bare: { requests: number; rssAt10sMb: number; rssEndMb: number };
  };
  store: {
    lookup: { smallUs: number; largeUs: number; ratio: number };
    admission: { smallUs: number; largeUs: number; ratio: number };
  };
}
