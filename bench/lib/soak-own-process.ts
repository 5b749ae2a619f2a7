// Runs one of the soak's attacks in a process of its own. The probes (`probe`, `stream-probe`) measure the
// gateway's latency; in the attacking process their timers and sockets wait behind its thousands of sockets,
// so the attacker's own event-loop delays would be counted as the gateway's.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildAttacks, type Attack, type AttackContext } from './soak-attacks.js';

/** `attack` (built by buildAttacks from `ctx`) run by a child process; stop() ends it and result() is the child's. */
export function inOwnProcess(attack: Attack, ctx: AttackContext): Attack {
  let result: Record<string, unknown> = { error: 'the child process sent no result' };
  let stopChild: () => void = () => {};
  return {
    name: attack.name,
    what: `${attack.what} (in a process of its own)`,
    run() {
      const child = fork(fileURLToPath(import.meta.url), [JSON.stringify({ name: attack.name, ctx })], { execArgv: ['--import', 'tsx'] });
      stopChild = () => child.connected && child.send('stop');
      return new Promise<void>((resolve) => {
        child.once('message', (m) => {
          result = m as Record<string, unknown>;
          resolve();
        });
        child.once('exit', () => resolve());
      });
    },
    stop: () => stopChild(),
    result: () => result,
  };
}

/** The child: the named attack until the parent says stop, then its result over IPC. */
async function child(config: { name: string; ctx: AttackContext }) {
  const attack = buildAttacks(config.ctx).find((a) => a.name === config.name);
  if (!attack) throw new Error(`no attack ${config.name}`);
  process.once('message', () => attack.stop());
  await attack.run();
  process.send!(attack.result(), () => process.exit(0));
}

if (process.send && process.argv[2]?.startsWith('{')) {
  child(JSON.parse(process.argv[2]) as { name: string; ctx: AttackContext }).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
