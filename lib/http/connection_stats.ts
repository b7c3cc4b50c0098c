/** What a listener tells of its connections (lib/server/listener.ts), for the gauges of /metrics. */
export interface ConnectionStats {
  open: number;
  limit: number;
  /** Times accepting paused because `maxConnections` were open. */
  waitsAtLimit: number;
  /** Accepts that failed (out of descriptors, most often). */
  acceptFailures: number;
  /** Connections closed by the gateway, by reason (`address`: over the limit of one address). */
  closed: { head: number; idle: number; address: number };
}
