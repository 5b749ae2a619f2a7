// The shape of the benchmark dataset, decided up front for every tick (about 100 bytes per tick, so the
// whole plan of scale 1 is ~10 MB): chain, protocol, name, holders, transfers, where its rows start in the
// global id/hash numbering. Each table's pass then regenerates a tick's events from the tick's own PRNG
// streams (simulate.ts), so nothing but the plan is kept in memory and every pass sees the same events.
//
// Scale 1 (scale s multiplies every count):
//   ticks 100,000 · balances 10,000,000 · address_txs 20,000,000 · transactions 20,000,000
//   - one tick, sats on btc brc-20, with 1,350,000 holders (exactly, every balance positive);
//   - the other ticks' holders follow Zipf (holders ∝ 1/rank) over a random rank order, with ~4% deployed
//     and never minted; the largest of them stays below sats;
//   - each holder mints once (movement event 2 + transaction op mint), so balance rows = Σ holders;
//   - transfers (event 4 from + event 3 to + op transfer) fill the movement target:
//     ticks + balances + 2·transfers = movements; they are spread over ticks ∝ holders;
//   - non-inscription transactions (protocol/op/tick '') fill the transaction target:
//     ticks + balances + transfers + other = transactions;
//   - one busiest address, BENCH_NOTABLE.busiestAddress, holds 10,000 EVM ticks and makes 40,000 transfer
//     legs in them: 50,000 movements, about 20× the next address.
import { chainRows } from '../../test/support/fixtures.js';
import { BLOCKS } from '../../src/db/seed/demo.js';
import { Rng, mixSeed, nextPrime } from './rng.js';

export { chainRows };

/** Notable records of the benchmark dataset (fixed, whatever the scale or seed). */
export const BENCH_NOTABLE = {
  /** the same address as the demo dataset's busiest one, so scenarios written for one hit the other */
  busiestAddress: '0x6Ac6f9231c86ba4Ea4C40D196DA930C1d66439f5',
  biggestTick: { chain: 'btc', protocol: 'brc-20', tick: 'sats' },
  satsDeployer: 'bc1prtawdt82wfgrujx6d0heu0smxt4yykq440t447wan88csf3mc7csm3ulcn',
  satsDeployHash: '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333',
} as const;

export const DEFAULT_SEED = 20240212;

// ---------------------------------------------------------------------------------------------------
// Time and blocks

const sec = (iso: string): number => Date.parse(iso) / 1000;
/** activity ends here; every event is at or before it */
export const END = sec('2024-02-12T00:00:00Z');

/** Latest indexed block per chain (the demo dataset's), the anchor of each chain's height ↔ time map. */
export { BLOCKS };

export interface ChainInfo {
  chain: string;
  btc: boolean;
  /** share of the ticks */
  weight: number;
  protocols: Array<[string, number]>;
  msPerBlock: number;
  /** seconds between a block and the indexer writing it */
  lag: number;
  /** positions within a block are drawn below this */
  width: number;
  lastHeight: number;
  lastMs: number;
  /** deploy window [from, to, boom from, boom to, share in the boom] */
  window: [string, string, string, string, number];
}

const CHAIN_SPECS: Array<Omit<ChainInfo, 'lastHeight' | 'lastMs'>> = [
  { chain: 'eth', btc: false, weight: 0.22, protocols: [['erc-20', 0.7], ['ierc-20', 0.3]], msPerBlock: 12_000, lag: 19, width: 180,
    window: ['2023-06-15', '2024-02-06', '2023-06-16', '2023-08-31', 0.45] },
  { chain: 'avalanche', btc: false, weight: 0.16, protocols: [['asc-20', 1]], msPerBlock: 2_047, lag: 6, width: 60,
    window: ['2023-06-29', '2024-02-06', '2023-11-15', '2024-01-10', 0.8] },
  { chain: 'arbitrum', btc: false, weight: 0.08, protocols: [['erc-20', 1]], msPerBlock: 260, lag: 4, width: 20,
    window: ['2023-11-25', '2024-02-06', '2023-12-01', '2023-12-31', 0.6] },
  { chain: 'bsc', btc: false, weight: 0.14, protocols: [['bsc-20', 1]], msPerBlock: 3_000, lag: 7, width: 150,
    window: ['2023-10-20', '2024-02-06', '2023-11-10', '2023-12-31', 0.7] },
  { chain: 'fantom', btc: false, weight: 0.06, protocols: [['erc-20', 1]], msPerBlock: 1_740, lag: 5, width: 40,
    window: ['2023-11-25', '2024-02-06', '2023-12-05', '2024-01-05', 0.6] },
  { chain: 'polygon', btc: false, weight: 0.12, protocols: [['prc-20', 0.9], ['brc-20', 0.1]], msPerBlock: 2_200, lag: 11, width: 120,
    window: ['2023-11-05', '2024-02-06', '2023-11-15', '2023-12-20', 0.75] },
  { chain: 'btc', btc: true, weight: 0.22, protocols: [['brc-20', 1]], msPerBlock: 600_000, lag: 83, width: 2400,
    window: ['2023-06-01', '2024-02-06', '2023-11-01', '2023-12-31', 0.5] },
];

export const CHAINS: ChainInfo[] = CHAIN_SPECS.map((c) => {
  const b = BLOCKS.find((x) => x.chain === c.chain)!;
  return { ...c, lastHeight: Number(b.block_number), lastMs: Date.parse(b.block_time) };
});
const CHAIN_BY_NAME = new Map(CHAINS.map((c) => [c.chain, c]));

// ---------------------------------------------------------------------------------------------------
// Targets

export interface Targets {
  scale: number;
  ticks: number;
  balances: number;
  movements: number;
  transactions: number;
  bigHolders: number;
  busyTicks: number;
  busyMovements: number;
}

function targetsFor(scale: number): Targets {
  const r = (n: number) => Math.round(n * scale);
  const t: Targets = {
    scale,
    ticks: r(100_000),
    balances: r(10_000_000),
    movements: r(20_000_000),
    transactions: r(20_000_000),
    bigHolders: r(1_350_000),
    busyTicks: Math.max(1, r(10_000)),
    busyMovements: Math.max(5, r(50_000)),
  };
  if (t.ticks < 20) throw new Error(`scale ${scale} is too small (fewer than 20 ticks)`);
  if (t.ticks > 26 ** 5 / 2) throw new Error(`scale ${scale} is too large for the tick name space`);
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Plan

export interface AddressFamily {
  btc: boolean;
  /** whales: pool indices [0, whales); prime */
  whales: number;
  /** everybody else: pool indices [whales, whales + general); prime */
  general: number;
}

export interface TickPlan {
  /** position in the plan before ordering: the key of the tick's PRNG streams */
  index: number;
  /** ticks.id: 1-based, in deploy order */
  id: number;
  chain: ChainInfo;
  protocol: string;
  tick: string;
  name: string;
  decimals: number;
  /** base units (value × 10^decimals) */
  lim: bigint;
  transferType: number;
  /** total_supply = minted (fully minted) or a round number above it */
  fullyMinted: boolean;
  /** progress for partially minted ticks, in parts per million (>= 3000) */
  progressPpm: number;
  holders: number;
  /** whales among the holders (the first minters, drawn from the family's whale pool) */
  whales: number;
  transfers: number;
  /** busiest address: holder 0, and this many of the transfers are its legs */
  busy: boolean;
  busyLegs: number;
  sats: boolean;
  /** no transfer empties a balance (sats keeps exactly its holders; busy ticks always find a sender) */
  keepPositive: boolean;
  /** every mint is exactly lim */
  mintExactly: boolean;
  deployT: number;
  /** first mint, and the seconds over which mints and transfers spread */
  firstT: number;
  spanS: number;
  deployer: string | number;
  deployHash?: string;
  nullUpdated: boolean;
  /** pool walks: holder x (after the busy slot) is whale (w + x·c) mod W, or W + (g + (x - whales)·d) mod G */
  w: number; c: number; g: number; d: number;
  /** 0-based position of the deploy in address_txs (id - 1) and in transactions (id - 1 = hash number) */
  moveBase: number;
  txBase: number;
  /** non-inscription transactions written right after this tick's own */
  noise: number;
  noiseT0: number;
  noiseT1: number;
}

export interface Plan {
  seed: number;
  targets: Targets;
  ticks: TickPlan[];
  evm: AddressFamily;
  btc: AddressFamily;
  counts: { ticks: number; balances: number; movements: number; transactions: number; transfers: number;
    noise: number; busyMovements: number; zeroTicks: number };
  /** holders of the largest tick that is not sats */
  runnerUpHolders: number;
}

/** Limits per mint, in tokens, with repetitions for weight. */
const LIMS = [1, 1, 4, 8, 10, 10, 21, 69, 100, 100, 420, 500, 1000, 1000, 1000, 1000, 1000, 2100, 5000, 10000,
  10000, 21000, 69420, 100000, 1000000, 1000000];

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function sampleDeployTime(rng: Rng, c: ChainInfo): number {
  const [from, to, boomFrom, boomTo, boomShare] = c.window;
  const [a, b] = rng.chance(boomShare) ? [boomFrom, boomTo] : [from, to];
  const t0 = sec(`${a}T00:00:00Z`);
  return t0 + Math.floor(rng.next() * (sec(`${b}T00:00:00Z`) - t0));
}

function cumulative(weights: number[]): number[] {
  let s = 0;
  return weights.map((w) => (s += w));
}

function shuffle<T>(rng: Rng, a: T[]): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Zipf holders over ranks 1..n summing exactly to total: max(1, floor(C / r)), C found by bisection. */
function zipfHolders(n: number, total: number): number[] {
  if (total < n) throw new Error(`cannot give ${n} ticks at least one holder each out of ${total}`);
  const sum = (c: number) => {
    let s = 0;
    for (let r = 1; r <= n; r++) s += Math.max(1, Math.floor(c / r));
    return s;
  };
  let lo = 0;
  let hi = total;
  while (hi - lo > 1e-6 * Math.max(1, lo)) {
    const mid = (lo + hi) / 2;
    if (sum(mid) <= total) lo = mid;
    else hi = mid;
  }
  const h = Array.from({ length: n }, (_, i) => Math.max(1, Math.floor(lo / (i + 1))));
  let deficit = total - h.reduce((a, b) => a + b, 0);
  // the few holders lost to rounding go to the next ranks (never to rank 1, which must stay below sats)
  for (let r = 1; deficit > 0; r = r + 1 >= n ? 1 : r + 1, deficit--) h[r]! += 1;
  return h;
}

/** Integer shares of total proportional to weights (largest remainder), deterministic. */
function apportion(total: number, weights: number[]): number[] {
  const sumW = weights.reduce((a, b) => a + b, 0);
  if (sumW <= 0) return weights.map(() => 0);
  const raw = weights.map((w) => (total * w) / sumW);
  const out = raw.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) out[order[k]![1]]! += 1;
  return out;
}

function nameBase(i: number, letters: number, offset: number): string {
  const space = 26 ** letters;
  // 104729 is prime and shares no factor with 26^k: a bijection on [0, 26^k)
  let v = (i * 104729 + offset) % space;
  let s = '';
  for (let k = 0; k < letters; k++) { s = LETTERS[v % 26]! + s; v = Math.floor(v / 26); }
  return s;
}

export function buildPlan(scale: number, seed = DEFAULT_SEED): Plan {
  const targets = targetsFor(scale);
  const rng = new Rng(mixSeed(seed, 0x91a2));
  const T = targets.ticks;
  const chainCum = cumulative(CHAINS.map((c) => c.weight));
  const btcChain = CHAIN_BY_NAME.get('btc')!;

  // 1. chains, protocols, names (index 0 is sats)
  const letters = T * 2 <= 26 ** 4 ? 4 : 5;
  const nameOffset = mixSeed(seed, 0x4e41) % 26 ** letters;
  const used = new Set<string>(['btc/brc-20/sats']);
  const draft: Array<Pick<TickPlan, 'index' | 'chain' | 'protocol' | 'tick' | 'name' | 'sats'>> = [];
  for (let i = 0; i < T; i++) {
    if (i === 0) {
      draft.push({ index: 0, chain: btcChain, protocol: 'brc-20', tick: 'sats', name: 'sats', sats: true });
      continue;
    }
    const chain = CHAINS[rng.weighted(chainCum)]!;
    const protocol = chain.protocols[rng.weighted(cumulative(chain.protocols.map((p) => p[1])))]![0];
    let base = nameBase(i, letters, nameOffset);
    if (base === 'sats') base = 'sat0';
    let tick = base;
    const r = rng.next();
    if (!chain.btc && r < 0.08 && draft.length > 1) {
      // the same name on another chain, as real ticks are copied across chains
      const other = draft[1 + Math.floor(rng.next() * (draft.length - 1))]!;
      if (other.chain !== chain && !used.has(`${chain.chain}/${protocol}/${other.tick}`)) tick = other.tick;
    } else if (!chain.btc && r < 0.18) tick = `${base}${rng.int(1, 9)}`;
    else if (!chain.btc && r < 0.21) tick = `${base}s`;
    else if (r < 0.215) tick = `${base}_${LETTERS[rng.int(0, 25)]}`; // LIKE metacharacters, for searches
    else if (r < 0.218) tick = `${base}%`;
    else if (!chain.btc && r < 0.221) tick = `🐸${base}`;
    const key = `${chain.chain}/${protocol}/${tick}`;
    if (used.has(key)) throw new Error(`duplicate tick ${key}`);
    used.add(key);
    const v = rng.next();
    let name = v < 0.2 ? tick.toUpperCase() : v < 0.3 ? tick.charAt(0).toUpperCase() + tick.slice(1) : tick;
    // a few display names carrying every character COPY's text format must escape
    if (i % 997 === 0) name = `${name} "odd"\\name\twith tab\nand newline`;
    draft.push({ index: i, chain, protocol, tick, name, sats: false });
  }

  // 2. holders: sats, a few never-minted ticks, Zipf for the rest over a random rank order
  const holders = new Array<number>(T).fill(0);
  holders[0] = targets.bigHolders;
  const others = shuffle(rng, Array.from({ length: T - 1 }, (_, k) => k + 1));
  const zeroCount = Math.floor((T - 1) * 0.04);
  const minted = others.slice(zeroCount);
  const z = zipfHolders(minted.length, targets.balances - targets.bigHolders);
  minted.forEach((i, r) => { holders[i] = z[r]!; });
  const runnerUpHolders = z[0] ?? 0;
  if (runnerUpHolders >= targets.bigHolders) {
    throw new Error(`the second largest tick (${runnerUpHolders} holders) would not be below sats`);
  }

  // 3. the busiest address: holder 0 of busyTicks EVM ticks with at least 3 holders
  const evmCandidates = shuffle(rng, minted.filter((i) => !draft[i]!.chain.btc && holders[i]! >= 3));
  if (evmCandidates.length < targets.busyTicks) throw new Error('not enough EVM ticks for the busiest address');
  const busyTicks = new Set(evmCandidates.slice(0, targets.busyTicks));
  const busyLegsTotal = targets.busyMovements - targets.busyTicks;
  const busyLegs = new Array<number>(T).fill(0);
  [...busyTicks].sort((a, b) => a - b).forEach((i, k) => {
    busyLegs[i] = Math.floor(busyLegsTotal / busyTicks.size) + (k < busyLegsTotal % busyTicks.size ? 1 : 0);
  });

  // 4. transfers fill the movement target; other transactions fill the transaction target
  const transfersTotal = Math.floor((targets.movements - T - targets.balances) / 2);
  const spread = transfersTotal - busyLegsTotal;
  if (spread < 0) throw new Error('movement target too small for the transfers of the busiest address');
  const weights = holders.map((h) => (h >= 2 ? h * (0.3 + 1.4 * rng.next()) : 0));
  const transfers = apportion(spread, weights).map((n, i) => n + busyLegs[i]!);
  const noiseTotal = targets.transactions - (T + targets.balances + transfersTotal);
  if (noiseTotal < 0) throw new Error('transaction target too small');

  // 5. address families (pool sizes are primes so a stride walk visits distinct addresses)
  const family = (btc: boolean): AddressFamily => {
    let sum = 0;
    let max = 0;
    for (let i = 0; i < T; i++) {
      if (draft[i]!.chain.btc !== btc) continue;
      sum += holders[i]!;
      max = Math.max(max, holders[i]!);
    }
    return { btc, whales: nextPrime(Math.max(500, 2000 * scale)), general: nextPrime(Math.max(Math.ceil(sum / 3), max + 1, 1000)) };
  };
  const evm = family(false);
  const btc = family(true);

  // 6. per tick details, then deploy order
  const ticks: TickPlan[] = draft.map((d, i) => {
    const fam = d.chain.btc ? btc : evm;
    const h = holders[i]!;
    const busy = busyTicks.has(i);
    const decimals = d.sats ? 18 : rng.chance(0.2) ? 18 : rng.chance(0.06) ? 8 : 0;
    let limTokens = d.sats ? 100_000_000 : rng.pick(LIMS);
    if (busy && limTokens < 1000) limTokens = 1000;
    const deployT = d.sats ? sec('2023-06-02T03:12:44Z') : sampleDeployTime(rng, d.chain);
    const firstT = deployT + rng.int(12, 900);
    const events = h + transfers[i]!;
    const spanS = events === 0 ? 0 : Math.min(END - firstT, Math.max(900, events * rng.int(30, 1200)));
    const dn = Math.min(fam.general, Math.max(100, Math.round(20_000 * scale)));
    const r = rng.next();
    // an explicit literal: `{ ...d, <30 more> }` costs ~80 µs per object on Node 20 (dictionary mode)
    return {
      index: d.index, chain: d.chain, protocol: d.protocol, tick: d.tick, name: d.name, sats: d.sats,
      id: 0,
      decimals,
      lim: BigInt(limTokens) * 10n ** BigInt(decimals),
      transferType: r < 0.55 ? 0 : r < 0.75 ? 1 : 2,
      fullyMinted: !d.sats && h > 0 && rng.chance(0.3),
      progressPpm: Math.max(3000, Math.floor((0.003 + 0.95 * rng.next() ** 1.6) * 1e6)),
      holders: h,
      whales: Math.min(h - (busy ? 1 : 0), 1 + Math.floor(Math.log2(Math.max(1, h)))),
      transfers: transfers[i]!,
      busy,
      busyLegs: busyLegs[i]!,
      keepPositive: d.sats || busy,
      mintExactly: busy,
      deployT,
      firstT,
      spanS,
      deployer: d.sats ? BENCH_NOTABLE.satsDeployer : fam.whales + Math.floor(dn * rng.next() ** 2.5),
      deployHash: d.sats ? BENCH_NOTABLE.satsDeployHash : undefined,
      nullUpdated: !d.sats && rng.chance(0.18),
      w: rng.int(0, fam.whales - 1), c: rng.int(1, fam.whales - 1),
      g: rng.int(0, fam.general - 1), d: rng.int(1, fam.general - 1),
      moveBase: 0, txBase: 0, noise: 0, noiseT0: 0, noiseT1: 0,
    };
  });
  ticks.sort((a, b) => a.deployT - b.deployT || a.index - b.index);
  let moveBase = 0;
  let txBase = 0;
  ticks.forEach((t, k) => {
    t.id = k + 1;
    t.moveBase = moveBase;
    t.txBase = txBase;
    t.noise = Math.floor((noiseTotal * (k + 1)) / T) - Math.floor((noiseTotal * k) / T);
    t.noiseT0 = t.deployT;
    t.noiseT1 = ticks[k + 1]?.deployT ?? END;
    moveBase += 1 + t.holders + 2 * t.transfers;
    txBase += 1 + t.holders + t.transfers + t.noise;
  });

  const balances = holders.reduce((a, b) => a + b, 0);
  return {
    seed, targets, ticks, evm, btc, runnerUpHolders,
    counts: {
      ticks: T, balances, movements: moveBase, transactions: txBase, transfers: transfersTotal, noise: noiseTotal,
      busyMovements: targets.busyTicks + busyLegsTotal, zeroTicks: zeroCount,
    },
  };
}

/** Pool index of holder j of a tick, or -1 for the busiest address. */
export function holderSlot(t: TickPlan, fam: AddressFamily, j: number): number {
  if (t.busy && j === 0) return -1;
  const x = t.busy ? j - 1 : j;
  if (x < t.whales) return (t.w + x * t.c) % fam.whales;
  return fam.whales + ((t.g + (x - t.whales) * t.d) % fam.general);
}
