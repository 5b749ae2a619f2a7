// COPY … FROM STDIN through postgres.js: text lines pushed as ~1 MB buffers. Used by the benchmark's
// generator (bench/lib/copy.ts) and the sync's backfill (src/sync/backfill.ts), which copies each source
// range inside a transaction that also records the range as done.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type postgres from 'postgres';

/**
 * Pulls text lines from an iterator and pushes them as ~1 MB Buffers (backpressure respected). Each line
 * is UTF-8-encoded into the buffer as it comes: concatenating thousands of lines into one string first
 * and encoding that was 5–10× slower (flattening huge rope strings, GC).
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
        const buf = Buffer.allocUnsafe(this.size);
        let off = 0;
        let n = 0;
        let done = false;
        for (;;) {
          let line = this.carry;
          this.carry = undefined;
          if (line === undefined) {
            const r = this.it.next();
            if (r.done) { done = true; break; }
            line = r.value;
          }
          if (off + line.length * 3 > buf.length) {
            if (off === 0) throw new Error(`a ${line.length}-character line does not fit a ${this.size}-byte chunk`);
            this.carry = line;
            break;
          }
          off += buf.write(line, off, 'utf8');
          n++;
        }
        if (n > 0) this.onRows(n);
        const more = off > 0 ? this.push(buf.subarray(0, off)) : true;
        if (done) { this.push(null); return; }
        if (!more) return;
      }
    } catch (error) {
      this.destroy(error as Error);
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

/** COPY ready-encoded text (whole lines per Buffer) into `table` on a connection the caller holds. */
export async function copyChunksInto(conn: postgres.Sql<Record<string, never>>, table: string, columns: string[],
  chunks: readonly Buffer[]): Promise<void> {
  const writable = await conn.unsafe(`COPY ${table} (${columns.join(', ')}) FROM STDIN`).writable();
  await pipeline(Readable.from(chunks), writable);
}

/** COPY `lines` into `table` on a connection the caller holds (reserved, usually inside BEGIN … COMMIT). */
export async function copyLinesInto(conn: postgres.Sql<Record<string, never>>, table: string, columns: string[],
  lines: Iterable<string>, onRows: (n: number) => void = () => {}): Promise<void> {
  const writable = await conn.unsafe(`COPY ${table} (${columns.join(', ')}) FROM STDIN`).writable();
  await pipeline(new LineSource(lines, onRows), writable);
}
