import type { DataSnapshot } from './version.js';

// How fresh a read replica is, proven rather than assumed. Every read of the primary's data version
// (src/db/version.ts) says: when it was sent, the primary's data was at most that version (its snapshot
// was taken after). A replica whose data version is at least that version held, from then on, everything
// the primary had at that moment, so the answers it gives now are at most `now − that moment` behind the
// primary. Versions are compared, never clocks: no replay timestamp, no clock of another machine, and
// nothing is assumed about a replica before it shows a version this gateway has seen on the primary
// (one that has replayed nothing since it restarted is not fresh, it is unknown).

/** One data version of the primary: when a read first showed it and when one last did (performance.now()). */
interface Seen {
  epoch: string;
  version: bigint;
  firstSentAt: number;
  lastSentAt: number;
}

/** Versions older than this (and past the newest) are forgotten: a replica that far behind is unknown, i.e. out. */
const keptMs = 15 * 60_000;
const keptMax = 20_000;

export interface PrimaryHistory {
  /** A successful read of the primary's data version, sent at `sentAt`. */
  read(snapshot: DataSnapshot, sentAt: number): void;
  /**
   * The latest moment at which the primary's data is known to have been no newer than `snapshot` (a
   * replica's): null when no read of the primary proves it (another database, or older than anything seen).
   */
  provenAt(snapshot: DataSnapshot): number | null;
  /** Whether `snapshot` is at least the newest version seen on the primary (same database). */
  atLatest(snapshot: DataSnapshot): boolean;
}

export function primaryHistory(): PrimaryHistory {
  const seen: Seen[] = [];
  return {
    read(snapshot, sentAt) {
      const version = BigInt(snapshot.version);
      const last = seen.at(-1);
      if (last && last.epoch === snapshot.epoch && last.version === version) {
        last.lastSentAt = Math.max(last.lastSentAt, sentAt);
      } else {
        seen.push({ epoch: snapshot.epoch, version, firstSentAt: sentAt, lastSentAt: sentAt });
      }
      while (seen.length > 1 && (seen.length > keptMax || seen[0]!.lastSentAt < sentAt - keptMs)) seen.shift();
    },
    provenAt(snapshot) {
      const version = BigInt(snapshot.version);
      // newest first: a replica is usually at or near the primary's latest version
      for (let i = seen.length - 1; i >= 0; i--) {
        const s = seen[i]!;
        if (s.epoch !== snapshot.epoch) return null;
        if (s.version <= version) return s.lastSentAt;
      }
      return null;
    },
    atLatest(snapshot) {
      const last = seen.at(-1);
      return last !== undefined && last.epoch === snapshot.epoch && BigInt(snapshot.version) >= last.version;
    },
  };
}
