// Progress on stderr: one bar per phase with rows/s and ETA (cli-progress). When stderr is not a
// terminal (nohup, CI), cli-progress prints a plain status line every 10 s instead of redrawing.
import cliProgress from 'cli-progress';

export interface Progress {
  add(n: number): void;
  stop(): void;
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

export function progressBar(label: string, total: number, unit = 'rows'): Progress {
  const started = performance.now();
  const bar = new cliProgress.SingleBar({
    format: `${label.padEnd(14)} [{bar}] {percentage}% | {done}/{all} ${unit} | {rate} ${unit}/s | {elapsed}s | ETA {eta_formatted}`,
    barCompleteChar: '█',
    barIncompleteChar: '░',
    barsize: 30,
    hideCursor: true,
    stream: process.stderr,
    fps: 5,
    etaBuffer: 200,
    noTTYOutput: true,
    notTTYSchedule: 10_000,
  });
  let value = 0;
  const payload = () => {
    const s = (performance.now() - started) / 1000;
    return { done: thousands(value), all: thousands(total), rate: thousands(s > 0 ? value / s : 0), elapsed: s.toFixed(0) };
  };
  bar.start(Math.max(1, total), 0, payload());
  // keeps elapsed time and rate current between updates (index builds report once a minute or less)
  const tick = setInterval(() => bar.update(value, payload()), 1000);
  tick.unref();
  return {
    add(n: number) {
      value += n;
      bar.update(value, payload());
    },
    stop() {
      clearInterval(tick);
      bar.update(value, payload());
      bar.stop();
    },
  };
}
