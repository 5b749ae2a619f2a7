// What every attack of the soak is, and what it is told about the gateway it attacks (its own module, so that
// the attack libraries and their index, soak-attacks.ts, import it without importing each other).
export interface AttackContext {
  base: string;
  host: string;
  port: number;
  /** Popular ticks ([chain, protocol, tick, holders]), most holders first. */
  ticks: [string, string, string, number][];
  /** Seconds into the run when the three-level document is first sent. */
  nested3AtS: number;
  slowSockets: number;
  slowEveryMs: number;
  batchWorkers: number;
  /** The soak database (live events are written there by the stream attacks). */
  dbUrl?: string;
  /** Addresses of the idle-streams attack (32 streams each). */
  idleAddresses?: number;
}

export interface Attack {
  name: string;
  what: string;
  run(): Promise<void>;
  stop(): void;
  result(): Record<string, unknown>;
}
