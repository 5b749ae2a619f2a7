// One tick's life, regenerated identically by every pass: the deploy, then `holders` mints (holder j mints
// once, in order j = 0, 1, …) interleaved with `transfers` transfers between holders who already minted.
// Balances are BigInt base units; a transfer never overdraws (sender keeps ≥ half unless it empties its
// balance on purpose, which sats and the busy ticks never do), so every invariant holds by construction:
//   Σ balances = Σ mints = minted;  holders = balances > 0;  events = 1 + holders + transfers.
import { Rng, mixSeed } from './rng.js';
import type { TickPlan } from './plan.js';

export const EV_DEPLOY = 1;
export const EV_MINT = 2;
const EV_TRANSFER = 3;

export interface SimEvent {
  kind: 1 | 2 | 3;
  /** 0 = deploy, then 1, 2, … (the tick's transaction number) */
  k: number;
  /** unix seconds */
  t: number;
  /** holder indices (-1 = the deployer) */
  from: number;
  to: number;
  amount: bigint;
}

export interface SimState {
  balances: bigint[];
  /** unix seconds of each holder's last change */
  lastT: Uint32Array;
}

/** PRNG streams of a tick: mint amounts, the interleaving, balances' `available`, transactions' gas. */
export const STREAM = { mint: 1, sim: 2, balance: 3, tx: 4, noise: 5, supply: 6 } as const;
export const tickRng = (seed: number, t: TickPlan, stream: number) => new Rng(mixSeed(seed, t.index, stream));

function mintAmount(t: TickPlan, rng: Rng): bigint {
  if (t.mintExactly) return t.lim;
  return rng.chance(t.sats ? 0.9 : 0.85) ? t.lim : rng.upTo(t.lim);
}

/** Σ of the tick's mints, drawn exactly as simulate() draws them. */
export function mintedOf(seed: number, t: TickPlan): bigint {
  const rng = tickRng(seed, t, STREAM.mint);
  let s = 0n;
  for (let j = 0; j < t.holders; j++) s += mintAmount(t, rng);
  return s;
}

/** Unix seconds of the tick's event k >= 1 (front-loaded: activity fades after the launch). */
export function eventTime(t: TickPlan, k: number): number {
  const n = t.holders + t.transfers;
  return t.firstT + Math.floor(t.spanS * ((k - 1) / Math.max(1, n)) ** 1.5);
}

export function* simulate(seed: number, t: TickPlan, state?: SimState): Generator<SimEvent> {
  const ev: SimEvent = { kind: EV_DEPLOY, k: 0, t: t.deployT, from: -1, to: -1, amount: 0n };
  yield ev;

  const rngM = tickRng(seed, t, STREAM.mint);
  const rng = tickRng(seed, t, STREAM.sim);
  const H = t.holders;
  const bal: bigint[] = state?.balances ?? new Array<bigint>(H);
  for (let j = 0; j < H; j++) bal[j] = 0n;
  const lastT = state?.lastT;
  const lo = t.busy ? 1 : 0;
  const need = t.keepPositive ? 2n : 1n;
  let minted = 0;
  let trLeft = t.transfers;
  let busyLeft = t.busyLegs;

  /** a holder in [lo, minted), skewed towards the first minters */
  const skewed = () => lo + Math.floor((minted - lo) * rng.next() ** 2);
  const sender = (): number => {
    let j = skewed();
    for (let tries = 0; tries < 6 && bal[j]! < need; tries++) j = skewed();
    if (bal[j]! >= need) return j;
    const span = minted - lo;
    for (let s = 1; s < span; s++) {
      const x = lo + ((j - lo + s) % span);
      if (bal[x]! >= need) return x;
    }
    return -1;
  };
  const recipient = (notThis: number): number => {
    const j = skewed();
    return j !== notThis ? j : lo + ((j - lo + 1) % (minted - lo));
  };
  const amountFrom = (b: bigint): bigint => {
    if (!t.keepPositive && (b === 1n || rng.chance(0.03))) return b; // leaves, balance row stays at 0
    return rng.upTo(b / 2n);
  };

  const n = H + t.transfers;
  for (let k = 1; k <= n; k++) {
    const mintsLeft = H - minted;
    ev.k = k;
    ev.t = eventTime(t, k);
    if (mintsLeft > 0 && (minted < lo + 2 || trLeft === 0 || rng.next() * (mintsLeft + trLeft) < mintsLeft)) {
      const amount = mintAmount(t, rngM);
      bal[minted]! += amount;
      if (lastT) lastT[minted] = ev.t;
      ev.kind = EV_MINT;
      ev.from = ev.to = minted;
      ev.amount = amount;
      minted++;
      yield ev;
      continue;
    }
    let from: number;
    let to: number;
    if (busyLeft > 0 && rng.next() * trLeft < busyLeft) {
      busyLeft--;
      // the busiest address (holder 0) sends or receives
      if (bal[0]! >= 2n && rng.chance(0.5)) {
        from = 0;
        to = recipient(-1);
      } else {
        from = sender();
        to = 0;
        if (from < 0) throw new Error(`tick ${t.id}: no sender for the busiest address`);
      }
    } else {
      from = sender();
      if (from < 0) throw new Error(`tick ${t.id}: no holder can send`);
      to = recipient(from);
    }
    trLeft--;
    const amount = amountFrom(bal[from]!);
    bal[from]! -= amount;
    bal[to]! += amount;
    if (lastT) lastT[from] = lastT[to] = ev.t;
    ev.kind = EV_TRANSFER;
    ev.from = from;
    ev.to = to;
    ev.amount = amount;
    yield ev;
  }
  if (minted !== H || trLeft !== 0 || busyLeft !== 0) {
    throw new Error(`tick ${t.id}: simulation ended with ${H - minted} mints, ${trLeft} transfers, ${busyLeft} busy legs left`);
  }
}
