// COPY … FROM STDIN through postgres.js: text lines pushed as ~1 MB buffers. Used by the benchmark's
// generator (bench/lib/copy.ts) and the sync's backfill (src/sync/backfill.ts), which copies each source
// range inside a transaction that also records the range as done.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type postgres from 'postgres';

/**
 * Pulls text lines from an iterator and pushes them as ~1 MB Buffers (backpressure respected). Each line
 * is UTF-8-encoded into the buffer as it comes, so no huge joined string is built and flattened first.
 */
export class LineSource extends Readable {
  private readonly it: Iterator<string>;
  /** a line that did not fit the previous chunk */
  private carry: string | undefined;
  constructor(lines: Iterable<string>, private readonly onRows: (n: number) => void, private readonly size = 1 << 20) {
    super({ highWaterMark: 4 << 20 });
    this.it = lines[Symbol.iterator]();
  }
  override _read(): void {
    try {
      for (;;) {
        const { buf, off, n, done } = this.fill();
        if (n > 0) this.onRows(n);
        const more = off > 0 ? this.push(buf.subarray(0, off)) : true;
        if (done) { this.push(null); return; }
        if (!more) return;
      }
    } catch (error) {
      this.destroy(error as Error);
    }
  }
  /** One chunk of whole lines: `off` bytes, `n` lines; `done` when the iterator is exhausted. */
  private fill(): { buf: Buffer; off: number; n: number; done: boolean } {
    const buf = Buffer.allocUnsafe(this.size);
    let off = 0;
    let n = 0;
    for (;;) {
      let line = this.carry;
      this.carry = undefined;
      if (line === undefined) {
        const r = this.it.next();
        if (r.done) return { buf, off, n, done: true };
        line = r.value;
      }
      if (off + line.length * 3 > buf.length) {
        if (off === 0) throw new Error(`a ${line.length}-character line does not fit a ${this.size}-byte chunk`);
        this.carry = line;
        return { buf, off, n, done: false };
      }
      off += buf.write(line, off, 'utf8');
      n++;
    }
  }
}

/** Escapes a value for COPY's text format (NULL as \\N; backslash, tab, newline, carriage return). */
function copyValue(v: string | number | null): string {
  if (v === null) return '\\N';
  const s = String(v);
  return /[\\\t\n\r]/.test(s)
    ? s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : s;
}

/** One COPY line from a row's values. */
export const copyLine = (values: (string | number | null)[]) => `${values.map(copyValue).join('\t')}\n`;

/**
 * COPY text encoded line by line as it is built, into ~256 KB Buffers: what a range of the backfill holds
 * until its COPY runs is then these Buffers (outside the JavaScript heap), not strings that outlive the
 * young generation.
 */
export class CopyChunks {
  readonly chunks: Buffer[] = [];
  lines = 0;
  private buf: Buffer;
  private off = 0;
  constructor(private readonly size = 256 << 10) {
    this.buf = Buffer.allocUnsafe(size);
  }
  push(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit
    if (this.off + line.length * 3 > this.size) {
      this.cut();
      if (line.length * 3 > this.size) {
        this.chunks.push(Buffer.from(line, 'utf8'));
        this.lines++;
        return;
      }
    }
    this.off += this.buf.write(line, this.off, 'utf8');
    this.lines++;
  }
  /** the chunks, the last one cut to what it holds */
  done(): Buffer[] {
    this.cut();
    return this.chunks;
  }
  private cut(): void {
    if (this.off === 0) return;
    this.chunks.push(this.buf.subarray(0, this.off));
    this.buf = Buffer.allocUnsafe(this.size);
    this.off = 0;
  }
}

/**
 * Starts `COPY … FROM STDIN` and streams `source` into it; settles with the server's answer. postgres.js
 * 3.4.9 resolves the query with the writable stream once the server accepts the COPY; an error the server
 * reports after the last chunk was handed over (a unique key, a value out of range, found once the rows
 * are inserted) then only goes to the query's `reject` (a no-op on the promise already resolved), and the
 * stream's end waits for a CommandComplete that never comes: the COPY hung for ever, its transaction
 * `idle in transaction (aborted)`. The query's `reject` is wrapped (before it runs) so that error ends the
 * COPY instead; an error while chunks are still written destroys the stream (the pipeline rejects).
 */
async function copyFrom(conn: postgres.Sql<Record<string, never>>, table: string, columns: string[], source: Readable): Promise<void> {
  const query = conn.unsafe(`COPY ${table} (${columns.join(', ')}) FROM STDIN`) as unknown as
    postgres.PendingQuery<postgres.Row[]> & { reject?: (error: unknown) => void };
  let serverError!: (error: unknown) => void;
  const failed = new Promise<never>((_, reject) => { serverError = reject; });
  failed.catch(() => {}); // raced below; not every COPY fails
  const reject = query.reject;
  if (typeof reject === 'function') {
    query.reject = (error: unknown) => {
      serverError(error);
      reject(error);
    };
  }
  const writable = await query.writable();
  const done = pipeline(source, writable);
  done.catch(() => {}); // a stream left unfinished by the server's error is settled by the race
  await Promise.race([done, failed]);
}

/** COPY ready-encoded text (whole lines per Buffer) into `table` on a connection the caller holds. */
export async function copyChunksInto(conn: postgres.Sql<Record<string, never>>, table: string, columns: string[],
  chunks: readonly Buffer[]): Promise<void> {
  await copyFrom(conn, table, columns, Readable.from(chunks));
}

/** COPY `lines` into `table` on a connection the caller holds (reserved, usually inside BEGIN … COMMIT). */
export async function copyLinesInto(conn: postgres.Sql<Record<string, never>>, table: string, columns: string[],
  lines: Iterable<string>, onRows: (n: number) => void = () => {}): Promise<void> {
  await copyFrom(conn, table, columns, new LineSource(lines, onRows));
}
