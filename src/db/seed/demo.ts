// The demo dataset: a deterministic, realistic read model of seven chains (about 300 ticks, their deploys,
// mints and transfers), built in memory and loaded with loadDataset(). It contains every tick, address and
// hash of the documented examples (/work/shared/spec/examples/v2-documented.json) so those calls answer
// with the documented records, though not with the documented (much larger) counts.
//
// Determinism: one seeded PRNG (mulberry32) drives every choice; nothing reads the clock. Amounts are
// BigInt base units (value × 10^decimals) rendered as decimal strings; no amount ever passes through a
// JS number.
//
// Consistency (checked by the seed test after loadDataset + refresh_counters):
//   - per tick, sum(balances) = sum(mint movements) = minted; minted <= total_supply, except the one
//     deliberately over-minted tick (OVERMINTED_TICK);
//   - holders = addresses with a positive balance (rows whose balance went back to 0 are kept);
//   - deploy = movement event 1 (amount 0) + transaction op "deploy"; mint = event 2 + op "mint"
//     (from = to = minter); transfer = event 4 (sender) + event 3 (recipient) + op "transfer"; a transfer
//     never overdraws; so a tick's tx_cnt = deploys + mints + transfers;
//   - movements and transactions are emitted in indexing order (created_at), which per chain is the block
//     order (block_height, position_in_block); block_time is a function of the height.
import type {
  BalanceInput, BlockInput, ChainInput, Dataset, MovementInput, TickInput, TransactionInput,
} from '../load.js';
import { Rng } from './rng.js';

/** Notable records of the dataset, for tests and docs. */
export const DEMO_NOTABLE = {
  busiestAddress: '0x6Ac6f9231c86ba4Ea4C40D196DA930C1d66439f5',
  scriptedAddress: '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A',
  overmintedTick: { chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs' },
  hugeSupplyTick: { chain: 'eth', protocol: 'erc-20', tick: 'maxi' },
  mostHoldersTick: { chain: 'btc', protocol: 'brc-20', tick: 'sats' },
} as const;

const SEED = 0x5eed2024;

// ---------------------------------------------------------------------------------------------------
// Time

const sec = (iso: string): number => Date.parse(iso) / 1000;
const iso = (s: number): string => new Date(s * 1000).toISOString().slice(0, 19) + 'Z';

/** Activity window of the dataset. */
const START = sec('2023-06-01T00:00:00Z');
const END = sec('2024-02-12T00:00:00Z');

interface Clock {
  /** (height, unix ms) points the chain is known to have passed; heights between are interpolated. */
  anchors: Array<[number, number]>;
  /** ms per block outside the anchors when there is only one */
  msPerBlock: number;
  /** seconds between a block and the indexer writing it (created_at = block_time + lag) */
  lag: number;
}

function segment(c: Clock, i: number): { h: number; t: number; rate: number } {
  const a = c.anchors;
  const p = a[Math.min(i, a.length - 1)]!;
  if (a.length === 1) return { h: p[0], t: p[1], rate: c.msPerBlock };
  const j = Math.min(Math.max(i, 0), a.length - 2);
  const p0 = a[j]!;
  const p1 = a[j + 1]!;
  return { h: p0[0], t: p0[1], rate: (p1[1] - p0[1]) / (p1[0] - p0[0]) };
}

function segmentIndexByHeight(c: Clock, h: number): number {
  let i = 0;
  while (i < c.anchors.length - 2 && h > c.anchors[i + 1]![0]) i++;
  return i;
}

function segmentIndexByTime(c: Clock, tMs: number): number {
  let i = 0;
  while (i < c.anchors.length - 2 && tMs > c.anchors[i + 1]![1]) i++;
  return i;
}

/** Unix ms of a height (a monotonic function). */
function msOfHeight(c: Clock, h: number): number {
  const s = segment(c, segmentIndexByHeight(c, h));
  return s.t + (h - s.h) * s.rate;
}

/** The last height at or before a unix second. */
function heightAt(c: Clock, t: number): number {
  const tMs = t * 1000;
  const s = segment(c, segmentIndexByTime(c, tMs));
  let h = s.h + Math.floor((tMs - s.t) / s.rate);
  while (msOfHeight(c, h + 1) <= tMs) h++;
  while (msOfHeight(c, h) > tMs) h--;
  return h;
}

// ---------------------------------------------------------------------------------------------------
// Chains (the documented inds_getAllChains reply)

const ICON = 'https://s3.indexs.io/chain/icon/';

const CHAINS: ChainInput[] = [
  { chain: 'eth', chain_id: 1, outer_chain: 'eth', name: 'Ethereum', logo: `${ICON}eth.png`, network_id: 1, ext: '', display_order: 1 },
  { chain: 'avalanche', chain_id: 43114, outer_chain: 'avax', name: 'Avalanche', logo: `${ICON}avalanche.png`, network_id: 43114, ext: '', display_order: 2 },
  { chain: 'arbitrum', chain_id: 42161, outer_chain: 'ETH', name: 'Arbitrum One', logo: `${ICON}arbitrum.png`, network_id: 42161, ext: '', display_order: 3 },
  { chain: 'bsc', chain_id: 56, outer_chain: 'BSC', name: 'BNB Smart Chain Mainnet', logo: `${ICON}bsc.png`, network_id: 56, ext: '', display_order: 4 },
  { chain: 'fantom', chain_id: 250, outer_chain: 'FTM', name: 'Fantom Opera', logo: `${ICON}fantom.png`, network_id: 250, ext: '', display_order: 5 },
  { chain: 'polygon', chain_id: 137, outer_chain: 'Polygon', name: 'Polygon Mainnet', logo: `${ICON}polygon.png`, network_id: 137, ext: '', display_order: 6 },
  { chain: 'btc', chain_id: 0, outer_chain: 'btc', name: 'BTC', logo: `${ICON}btc.png`, network_id: 0, ext: '', display_order: 7 },
];

/** Latest indexed block per chain, the anchor of each chain's height ↔ time map (bench/ data uses it too). */
export const BLOCKS: readonly BlockInput[] = [
  { chain: 'eth', block_number: '19319706', block_time: '2024-02-27T15:12:23Z', indexed_at: '2024-02-27T15:14:28Z' },
  { chain: 'avalanche', block_number: '42060612', block_time: '2024-02-24T00:11:02Z', indexed_at: '2024-02-27T15:20:53Z' },
  { chain: 'arbitrum', block_number: '183652607', block_time: '2024-02-23T11:44:17Z', indexed_at: '2024-02-23T11:44:22Z' },
  { chain: 'bsc', block_number: '36505209', block_time: '2024-02-27T15:15:54Z', indexed_at: '2024-02-27T15:16:26Z' },
  { chain: 'fantom', block_number: '76421555', block_time: '2024-02-27T14:42:35Z', indexed_at: '2024-02-27T14:43:09Z' },
  { chain: 'polygon', block_number: '54023873', block_time: '2024-02-27T15:13:42Z', indexed_at: '2024-02-27T15:14:24Z' },
  { chain: 'btc', block_number: '830439', block_time: '2024-02-14T15:33:22Z', indexed_at: '2024-02-14T15:55:39Z' },
];

function clockFromBlock(chain: string, msPerBlock: number, lag: number, extra: Array<[number, string]> = []): Clock {
  const b = BLOCKS.find((x) => x.chain === chain)!;
  const anchors: Array<[number, number]> = [...extra.map(([h, t]): [number, number] => [h, sec(t) * 1000]),
    [Number(b.block_number), sec(b.block_time) * 1000]];
  anchors.sort((x, y) => x[0] - y[0]);
  return { anchors, msPerBlock, lag };
}

const CLOCKS: Record<string, Clock> = {
  eth: clockFromBlock('eth', 12_000, 19),
  // avalanche: the avas deploy block and the documented inds_getLastBlockNumberIndexed reply as well
  avalanche: clockFromBlock('avalanche', 2_047, 6, [[31918263, '2023-06-28T16:17:05Z'], [40433785, '2024-01-16T10:18:46Z']]),
  arbitrum: clockFromBlock('arbitrum', 260, 4),
  bsc: clockFromBlock('bsc', 3_000, 7),
  fantom: clockFromBlock('fantom', 1_740, 5),
  polygon: clockFromBlock('polygon', 2_200, 11),
  btc: clockFromBlock('btc', 600_000, 83),
};

// ---------------------------------------------------------------------------------------------------
// Amounts

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** Base units → plain decimal string, trailing fractional zeros trimmed. */
function fmt(v: bigint, decimals: number): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  if (decimals === 0) return (neg ? '-' : '') + a.toString();
  const scale = pow10(decimals);
  const int = a / scale;
  const frac = (a % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return (neg ? '-' : '') + int.toString() + (frac ? '.' + frac : '');
}

/** "Nice" supplies/counts: 1, 2, 5, 10, 20, 21, 50, 100, 200, 210, 500, … */
const NICE: number[] = [];
for (let e = 0; e <= 15; e++) {
  for (const m of [10, 20, 21, 50]) {
    const v = (m * 10 ** e) / 10;
    if (Number.isInteger(v)) NICE.push(v);
  }
}
NICE.sort((a, b) => a - b);
const niceAtLeast = (x: number): number => NICE.find((v) => v >= x) ?? NICE[NICE.length - 1]!;
const niceNear = (x: number): number => {
  let best = 1;
  for (const v of NICE) if (Math.abs(Math.log(v / x)) < Math.abs(Math.log(best / x))) best = v;
  return best;
};

// ---------------------------------------------------------------------------------------------------
// Addresses and hashes

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function evmAddress(rng: Rng): string {
  // mixed case like an EIP-55 checksum (not a real one: that needs keccak)
  let s = '0x';
  for (const ch of rng.hex(40)) s += ch >= 'a' && rng.chance(0.5) ? ch.toUpperCase() : ch;
  return s;
}

function btcAddress(rng: Rng): string {
  const taproot = rng.chance(0.55);
  let s = taproot ? 'bc1p' : 'bc1q';
  const n = taproot ? 58 : 38;
  for (let i = 0; i < n; i++) s += BECH32[rng.int(0, 31)]!;
  return s;
}

class Pool {
  readonly addresses: string[];
  private readonly cumulative: number[];
  constructor(addresses: string[], exponent: number) {
    this.addresses = addresses;
    this.cumulative = [];
    let total = 0;
    for (let i = 0; i < addresses.length; i++) this.cumulative.push((total += 1 / (i + 1) ** exponent));
  }
  uniform(rng: Rng): string { return rng.pick(this.addresses); }
  /** Zipf-weighted: the first addresses are the busy bots. */
  zipf(rng: Rng): string {
    const x = rng.next() * this.cumulative[this.cumulative.length - 1]!;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.addresses[lo]!;
  }
}

// ---------------------------------------------------------------------------------------------------
// Tick plans

type Mode = 'none' | 'partial' | 'full' | 'over';

interface ForcedMint {
  /** position among the tick's mints; chosen at random when absent */
  index?: number;
  address: string;
  /** token units; the planned amount when absent */
  amount?: bigint;
  hash?: string;
  /** pinned block time (only for a tick's single mint) */
  t?: number;
}

interface Plan {
  chain: string;
  protocol: string;
  tick: string;
  name: string;
  decimals: number;
  transferType: number;
  /** base units */
  supply: bigint;
  lim: bigint;
  deployer: string;
  deployHash?: string;
  deployT: number;
  deployPinned: boolean;
  deployPos?: number;
  deployGas?: number;
  deployGasPrice?: number;
  mode: Mode;
  /** partial: number of mints; over: mints beyond the supply */
  mints: number;
  transfers: number;
  /** seconds over which the mints spread */
  mintSpan: number;
  forced: ForcedMint[];
  createdAt?: number;
  updatedAt?: number;
  nullUpdated: boolean;
}

const PROTOCOLS: Record<string, string> = {
  eth: 'erc-20', avalanche: 'asc-20', arbitrum: 'erc-20', bsc: 'bsc-20', fantom: 'erc-20', polygon: 'prc-20', btc: 'brc-20',
};

/** Generated ticks per chain (the named ones come on top). */
const GENERATED: Record<string, number> = {
  avalanche: 76, btc: 58, eth: 44, bsc: 36, polygon: 35, arbitrum: 22, fantom: 15,
};
const POLYGON_BRC20_EXTRA = 2;

/** Deploy-time windows: [from, to, boom from, boom to, share in the boom]. */
const WINDOWS: Record<string, [string, string, string, string, number]> = {
  eth: ['2023-06-15', '2024-02-06', '2023-06-16', '2023-08-31', 0.45],
  avalanche: ['2023-06-29', '2024-02-06', '2023-11-15', '2024-01-10', 0.8],
  arbitrum: ['2023-11-25', '2024-02-06', '2023-12-01', '2023-12-31', 0.6],
  bsc: ['2023-10-20', '2024-02-06', '2023-11-10', '2023-12-31', 0.7],
  fantom: ['2023-11-25', '2024-02-06', '2023-12-05', '2024-01-05', 0.6],
  polygon: ['2023-11-05', '2024-02-06', '2023-11-15', '2023-12-20', 0.75],
  btc: ['2023-06-01', '2024-02-06', '2023-11-01', '2023-12-31', 0.5],
};

const WORDS = [
  'pepe', 'doge', 'shib', 'floki', 'moon', 'lambo', 'wagmi', 'gmgm', 'hodl', 'fomo', 'rekt', 'pump', 'bull',
  'bear', 'frog', 'kitty', 'wojak', 'chad', 'based', 'bonk', 'meme', 'kong', 'apes', 'punk', 'punks', 'dino',
  'tiger', 'panda', 'dragon', 'ninja', 'ronin', 'samurai', 'shogun', 'zen', 'yolo', 'degen', 'whale', 'shark',
  'orca', 'crab', 'turtle', 'bunny', 'hippo', 'rhino', 'eagle', 'hawk', 'owl', 'wolf', 'lion', 'king', 'queen',
  'gold', 'silver', 'gems', 'ruby', 'jade', 'pearl', 'star', 'stars', 'comet', 'nova', 'mars', 'pluto', 'luna',
  'terra', 'aqua', 'fire', 'storm', 'thunder', 'rain', 'snow', 'cloud', 'ocean', 'wave', 'rock', 'iron',
  'titan', 'atlas', 'zeus', 'odin', 'thor', 'loki', 'hermes', 'apollo', 'rich', 'cash', 'coin', 'bits', 'byte',
  'pixel', 'cyber', 'robot', 'alien', 'ufo', 'ghost', 'zombie', 'witch', 'magic', 'mana', 'goblin', 'pizza',
  'taco', 'sushi', 'ramen', 'burger', 'donut', 'cookie', 'candy', 'honey', 'coffee', 'beer', 'sake', 'mango',
  'peach', 'lemon', 'cherry', 'berry', 'kiwi', 'melon', 'banana', 'duck', 'goose', 'horse', 'pony', 'goat',
  'sheep', 'mouse', 'rats', 'bats', 'elon', 'mask', 'trump', 'biden', 'satoshi', 'vitalik', 'hal', 'nakamoto',
  'genesis', 'alpha', 'omega', 'sigma', 'gamma', 'delta', 'zero', 'one', 'first', 'last', 'free', 'fair',
  'mint', 'inscribe', 'scribe', 'ink', 'rune', 'runes', 'relic', 'oxbt', 'ordi', 'piza', 'mmss', 'trac',
  'vmpx', 'bank', 'meta', 'lfg', 'gmi', 'ngmi', 'ser', 'fren', 'frens', 'wen', 'anon', 'noob', 'pro', 'max',
  'turbo', 'rocket', 'jet', 'ship', 'boat', 'train', 'taxi', 'bike', 'car',
];
const CHAIN_WORDS: Record<string, string[]> = {
  eth: ['eths', 'ethi', 'ierc', 'etch', 'gwei', 'merge', 'blob'],
  avalanche: ['avav', 'avax', 'ascs', 'asc', 'snow', 'sled', 'avai', 'avaxs', 'husky', 'nochill', 'kimbo', 'coq'],
  arbitrum: ['arbi', 'arbs', 'arbz', 'ierc', 'nitro'],
  bsc: ['bsci', 'bnbi', 'bsc', 'pancake', 'bunnyx', 'binance'],
  fantom: ['ftms', 'fans', 'ftm', 'spooky', 'boo'],
  polygon: ['pols', 'prcs', 'matic', 'poly', 'prc', 'polyx'],
  btc: ['ordi', 'oxbt', 'piza', 'mmss', 'trac', 'vmpx', 'bear', 'turt', 'nals', 'rdex', 'sats', 'mubi', 'rats'],
};
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Limits per mint, in tokens, with repetitions for weight. */
const LIMS = [1, 1, 4, 8, 10, 10, 21, 69, 100, 100, 420, 500, 1000, 1000, 1000, 1000, 1000, 2100, 5000, 10000,
  10000, 21000, 69420, 100000, 1000000, 1000000];

function sampleDeployTime(rng: Rng, chain: string): number {
  const [from, to, boomFrom, boomTo, boomShare] = WINDOWS[chain]!;
  const [a, b] = rng.chance(boomShare) ? [boomFrom, boomTo] : [from, to];
  return sec(`${a}T00:00:00Z`) + Math.floor(rng.next() * (sec(`${b}T00:00:00Z`) - sec(`${a}T00:00:00Z`)));
}

function pareto(rng: Rng, xmin: number, alpha: number, cap: number): number {
  return Math.min(cap, Math.floor(xmin / rng.nextPos() ** (1 / alpha)));
}

function nameVariant(rng: Rng, tick: string): string {
  const r = rng.next();
  if (r < 0.2) return tick.toUpperCase();
  if (r < 0.3) return tick.charAt(0).toUpperCase() + tick.slice(1);
  return tick;
}

function transferTypeOf(rng: Rng): number {
  const r = rng.next();
  return r < 0.55 ? 0 : r < 0.75 ? 1 : 2;
}

function basePlan(p: Omit<Plan, 'forced' | 'nullUpdated' | 'deployPinned' | 'mintSpan'> &
  Partial<Pick<Plan, 'forced' | 'nullUpdated' | 'deployPinned' | 'mintSpan'>>): Plan {
  return { forced: [], nullUpdated: false, deployPinned: false, mintSpan: 0, ...p };
}

function genericPlan(rng: Rng, chain: string, protocol: string, tick: string, pools: Pools): Plan {
  const evmLike = protocol === 'erc-20' || protocol === 'prc-20';
  const decimals = rng.chance(evmLike ? 0.16 : 0.05) ? 18 : rng.chance(0.04) ? 8 : 0;
  const scale = pow10(decimals);
  const r = rng.next();
  const mode: Mode = r < 0.1 ? 'none' : r < 0.36 ? 'full' : 'partial';
  const limTokens = rng.pick(LIMS);
  const lim = BigInt(limTokens) * scale;
  const popularity = pareto(rng, 3, 0.95, 520);
  let supply: bigint;
  let mints = 0;
  if (mode === 'full') {
    supply = lim * BigInt(niceNear(Math.max(1, popularity)));
  } else if (mode === 'partial') {
    mints = Math.max(1, popularity);
    const progress = 0.003 + 0.95 * rng.next() ** 1.6;
    supply = lim * BigInt(niceAtLeast(Math.max(mints * 1.2, mints / progress)));
  } else {
    supply = lim * BigInt(niceAtLeast(rng.int(100, 10_000_000)));
  }
  const deployT = sampleDeployTime(rng, chain);
  const plannedMints = mode === 'full' ? Number(supply / lim) : mints;
  const transfers = plannedMints === 0 || rng.chance(0.3) ? 0 : Math.floor(plannedMints * (0.05 + 0.55 * rng.next()));
  return basePlan({
    chain, protocol, tick, name: nameVariant(rng, tick), decimals, transferType: transferTypeOf(rng),
    supply, lim, deployer: pools.deployer(rng, chain), deployT, mode, mints, transfers,
    mintSpan: Math.max(900, Math.floor(plannedMints * rng.int(30, 2400))),
    nullUpdated: rng.chance(0.18),
  });
}

interface Pools {
  evm: Pool;
  btc: Pool;
  of(chain: string): Pool;
  deployer(rng: Rng, chain: string): string;
}

// ---------------------------------------------------------------------------------------------------
// The documented records

const A = {
  busy: '0x6Ac6f9231c86ba4Ea4C40D196DA930C1d66439f5',
  scripted: '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A',
  crazydogDeployer: '0xF2f9D2575023D320475ed7875FCDCB9b52787E59',
  avasDeployer: '0xE0eCCFe34c367Cbe0b6B261011b6781229942552',
  satsDeployer: 'bc1prtawdt82wfgrujx6d0heu0smxt4yykq440t447wan88csf3mc7csm3ulcn',
  ggangDeployer: '0x53B4daF4a49bB1a91D8Adfca584529f69e5211F5',
  lobbyDeployer: '0x7a7b6Be7f5Ac593bcb262b52ae5a731aa1690ad4',
};

const T = (n: number | string) => BigInt(n);

// The documented ticks first: each list draws from `rng` in order, so the seeded dataset stays the same.
function namedPlans(rng: Rng, pools: Pools): Plan[] {
  const documented = documentedPlans(rng, pools);
  return [...documented, ...edgeCasePlans(rng, pools)];
}

/** The ticks the documentation quotes (avalanche, sats, ggang), with their real deployers and hashes. */
function documentedPlans(rng: Rng, pools: Pools): Plan[] {
  const ggangMinter = pools.evm.uniform(rng);
  return [
    basePlan({
      chain: 'avalanche', protocol: 'asc-20', tick: 'avas', name: 'avas', decimals: 0, transferType: 0,
      supply: T(21_000_000), lim: T(1000), deployer: A.avasDeployer,
      deployHash: '0x7ffc56b2bf20f4f3474c1fd503fc3f1fb9066c8b0665d6da11185cac892108a5',
      deployT: sec('2023-06-28T16:17:05Z'), deployPinned: true, deployPos: 8, deployGas: 22248,
      deployGasPrice: 26_500_000_000, mode: 'partial', mints: 1150, transfers: 420, mintSpan: 200 * 86400,
      forced: [{ address: A.scripted, amount: T(1000) }, { address: A.scripted, amount: T(1000) }],
      createdAt: sec('2024-01-15T09:37:29Z'), nullUpdated: true,
    }),
    basePlan({
      chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog', name: 'crazydog', decimals: 0, transferType: 0,
      supply: T(21_000_000), lim: T(21_000_000), deployer: A.crazydogDeployer,
      deployHash: '0x2f88df8669337ec739d8414df0f3ef32bf166cb73233c965e805b7fa54eef1f2',
      deployT: 1704152964, deployPinned: true, mode: 'full', mints: 0, transfers: 0,
      forced: [{
        index: 0, address: A.crazydogDeployer, t: 1704524337 - CLOCKS.avalanche!.lag,
        hash: '0xe89e1c445431a695fcc2797cde214a731c65765468e6095672fb0cbe8f8a6fdd',
      }],
      createdAt: 1704524337, updatedAt: 1704524337,
    }),
    basePlan({
      chain: 'avalanche', protocol: 'asc-20', tick: 'tomray', name: 'tomray', decimals: 0, transferType: 2,
      supply: T(1000), lim: T(1), deployer: pools.evm.uniform(rng), deployT: sec('2023-12-19T13:41:07Z'),
      mode: 'partial', mints: 430, transfers: 35, mintSpan: 9 * 86400,
      forced: Array.from({ length: 13 }, () => ({ address: A.scripted, amount: T(1) })),
    }),
    basePlan({
      chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', name: 'Lobby', decimals: 0, transferType: 1,
      supply: T(2_100_000), lim: T(1000), deployer: A.lobbyDeployer,
      deployHash: '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601',
      deployT: sec('2023-12-27T08:02:51Z'), mode: 'partial', mints: 85, transfers: 12, mintSpan: 20 * 86400,
      forced: [{ address: A.scripted, amount: T(600) }],
    }),
    basePlan({
      chain: 'btc', protocol: 'brc-20', tick: 'sats', name: 'sats', decimals: 18, transferType: 0,
      supply: T('2100000000000000') * pow10(18), lim: T(100_000_000) * pow10(18), deployer: A.satsDeployer,
      deployHash: '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333',
      deployT: sec('2023-06-02T03:12:44Z'), mode: 'partial', mints: 2400, transfers: 900, mintSpan: 240 * 86400,
      createdAt: 1707230059,
    }),
    basePlan({
      chain: 'polygon', protocol: 'brc-20', tick: 'ggang', name: 'ggang', decimals: 0, transferType: 0,
      supply: T(5000), lim: T(500), deployer: A.ggangDeployer,
      deployHash: '0x0a2672352f59b27b29a2cbbd043930441daed984af2a73cd94e2ee2d77e9041c',
      deployT: 1704532932 - CLOCKS.polygon!.lag, deployPinned: true, mode: 'partial', mints: 5, transfers: 0,
      mintSpan: 3 * 3600,
      forced: [A.ggangDeployer, ggangMinter, A.ggangDeployer, ggangMinter, A.ggangDeployer]
        .map((address, index) => ({ index, address, amount: T(500) })),
    }),
  ];
}

/** Ticks on eth and bsc and the edge cases: values above 2^64, an over-mint, LIKE metacharacters. */
function edgeCasePlans(rng: Rng, pools: Pools): Plan[] {
  return [
    // supply 2^128 - 1, 18 decimals: supply, mints and balances all above 2^64
    basePlan({
      chain: 'eth', protocol: 'erc-20', tick: 'maxi', name: 'MAXI', decimals: 18, transferType: 2,
      supply: T('340282366920938463463374607431768211455') * pow10(18), lim: T('1000000000000000000000000000') * pow10(18),
      deployer: pools.evm.uniform(rng), deployT: sec('2023-07-04T17:26:11Z'), mode: 'partial', mints: 260,
      transfers: 190, mintSpan: 60 * 86400,
    }),
    // deliberately over-minted (minted > total_supply): a race the original indexer let through
    basePlan({
      chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs', name: 'BNBS', decimals: 0, transferType: 0,
      supply: T(21_000), lim: T(1000), deployer: pools.evm.uniform(rng), deployT: sec('2023-11-14T06:55:39Z'),
      mode: 'over', mints: 2, transfers: 9, mintSpan: 40 * 60,
    }),
    basePlan({
      chain: 'bsc', protocol: 'bsc-20', tick: 'bscs', name: 'bscs', decimals: 0, transferType: 2,
      supply: T(21_000_000), lim: T(1000), deployer: pools.evm.uniform(rng), deployT: sec('2023-11-16T11:04:20Z'),
      mode: 'partial', mints: 330, transfers: 80, mintSpan: 30 * 86400,
      forced: [{ address: A.scripted, amount: T(1000) }],
    }),
    basePlan({
      chain: 'bsc', protocol: 'bsc-20', tick: 'cake', name: 'CAKE', decimals: 0, transferType: 1,
      supply: T(1_000_000), lim: T(1000), deployer: pools.evm.uniform(rng), deployT: sec('2023-11-21T19:30:02Z'),
      mode: 'partial', mints: 120, transfers: 25, mintSpan: 12 * 86400,
      forced: [{ address: A.scripted, amount: T(140) }],
    }),
    // ticks with LIKE metacharacters, for the %key% search
    basePlan({
      chain: 'bsc', protocol: 'bsc-20', tick: 'gm_gm', name: 'GM_GM', decimals: 0, transferType: 0,
      supply: T(100_000), lim: T(100), deployer: pools.evm.uniform(rng), deployT: sec('2023-12-02T02:17:45Z'),
      mode: 'partial', mints: 40, transfers: 6, mintSpan: 5 * 86400,
    }),
    basePlan({
      chain: 'btc', protocol: 'brc-20', tick: '100%', name: '100%', decimals: 18, transferType: 1,
      supply: T(21_000) * pow10(18), lim: T(1000) * pow10(18), deployer: pools.btc.uniform(rng),
      deployT: sec('2023-12-11T21:48:10Z'), mode: 'full', mints: 0, transfers: 14, mintSpan: 2 * 86400,
    }),
  ];
}

// ---------------------------------------------------------------------------------------------------
// Simulation

type Kind = 'deploy' | 'mint' | 'transfer' | 'other';

interface Ev {
  seq: number;
  kind: Kind;
  chain: string;
  plan: Plan | null;
  /** unix seconds; after block assignment, the block time */
  t: number;
  pinned: boolean;
  pos?: number;
  hash: string;
  from: string;
  to: string;
  /** base units of the plan's tick */
  amount: bigint;
  gas?: number;
  gasPrice?: number;
  height: number;
  position: number;
  created: number;
}

interface TickState {
  plan: Plan;
  balances: Map<string, bigint>;
  events: Ev[];
}

/** Ticks in the dataset are case-folded; hash uniqueness is per chain (case-insensitive). */
class Hashes {
  private readonly seen = new Set<string>();
  claim(chain: string, hash: string): string {
    const key = `${chain}:${hash.toLowerCase()}`;
    if (this.seen.has(key)) throw new Error(`duplicate hash ${key}`);
    this.seen.add(key);
    return hash;
  }
  fresh(rng: Rng, chain: string): string {
    for (;;) {
      const h = (chain === 'btc' ? '' : '0x') + rng.hex(64);
      if (!this.seen.has(`${chain}:${h}`)) return this.claim(chain, h);
    }
  }
}

/** A set of addresses with positive balances, sampled uniformly. */
class HolderSet {
  private readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  get size(): number { return this.list.length; }
  add(a: string): void {
    if (this.index.has(a)) return;
    this.index.set(a, this.list.length);
    this.list.push(a);
  }
  delete(a: string): void {
    const i = this.index.get(a);
    if (i === undefined) return;
    const last = this.list.pop()!;
    if (last !== a) {
      this.list[i] = last;
      this.index.set(last, i);
    }
    this.index.delete(a);
  }
  pick(rng: Rng): string { return rng.pick(this.list); }
}

const FROZEN = new Set([A.scripted, A.crazydogDeployer, A.ggangDeployer]);

function simulate(rng: Rng, plan: Plan, pools: Pools, hashes: Hashes, nextSeq: () => number): TickState {
  const pool = pools.of(plan.chain);
  const balances = new Map<string, bigint>();
  const holders = new HolderSet();
  const events: Ev[] = [];
  const ev = (kind: Kind, t: number, from: string, to: string, amount: bigint, extra: Partial<Ev> = {}): Ev => {
    const e: Ev = {
      seq: nextSeq(), kind, chain: plan.chain, plan, t, pinned: false, hash: '', from, to, amount,
      height: 0, position: 0, created: 0, ...extra,
    };
    if (!e.hash) e.hash = hashes.fresh(rng, plan.chain);
    events.push(e);
    return e;
  };

  ev('deploy', plan.deployT, plan.deployer, plan.deployer, 0n, {
    pinned: plan.deployPinned, pos: plan.deployPos, gas: plan.deployGas, gasPrice: plan.deployGasPrice,
    hash: plan.deployHash ? hashes.claim(plan.chain, plan.deployHash) : '',
  });
  const amounts = mintAmounts(rng, plan);
  const { minters, hashOf, pinnedMintT } = forcedMints(rng, plan, amounts);
  const { mintTimes, transferTimes } = eventTimes(rng, plan, amounts.length, pinnedMintT);

  const seen: string[] = [];
  const pickMinter = (): string => {
    const r = rng.next();
    if (seen.length > 0 && r < 0.18) return rng.pick(seen);
    return r < 0.45 ? pool.zipf(rng) : pool.uniform(rng);
  };
  const credit = (a: string, v: bigint) => {
    const b = (balances.get(a) ?? 0n) + v;
    balances.set(a, b);
    if (b > 0n) holders.add(a);
    else holders.delete(a);
  };

  let mi = 0;
  let ti = 0;
  while (mi < amounts.length || ti < transferTimes.length) {
    const mt = mintTimes[mi];
    const tt = transferTimes[ti];
    if (mt !== undefined && (tt === undefined || mt <= tt)) {
      const minter = minters[mi] ?? pickMinter();
      if (!FROZEN.has(minter)) seen.push(minter);
      const amount = amounts[mi]!;
      ev('mint', mt, minter, minter, amount, {
        pinned: pinnedMintT !== undefined && mi === 0,
        hash: hashOf[mi] ? hashes.claim(plan.chain, hashOf[mi]!) : '',
      });
      credit(minter, amount);
      mi++;
    } else {
      ti++;
      const transfer = pickTransfer(rng, plan, pool, holders, balances);
      if (!transfer) continue;
      ev('transfer', tt!, transfer.sender, transfer.recipient, transfer.amount);
      credit(transfer.sender, -transfer.amount);
      credit(transfer.recipient, transfer.amount);
    }
  }
  return { plan, balances, events };
}

/** The amounts of a tick's mints, in order. */
function mintAmounts(rng: Rng, plan: Plan): bigint[] {
  const scale = pow10(plan.decimals);
  // an odd amount: whole tokens, or (half the time, with decimals) any number of base units
  const randomAmount = (): bigint =>
    plan.decimals > 0 && (rng.chance(0.5) || plan.lim < scale) ? rng.upTo(plan.lim) : rng.upTo(plan.lim / scale) * scale;
  const amounts: bigint[] = [];
  if (plan.mode === 'full' || plan.mode === 'over') {
    let left = plan.supply;
    while (left > 0n) {
      let a = plan.lim < plan.supply && rng.chance(0.08) ? randomAmount() : plan.lim;
      if (a > left) a = left;
      amounts.push(a);
      left -= a;
    }
    if (plan.mode === 'over') for (let i = 0; i < plan.mints; i++) amounts.push(plan.lim);
  } else if (plan.mode === 'partial') {
    for (let i = 0; i < plan.mints; i++) amounts.push(rng.chance(0.1) ? randomAmount() : plan.lim);
  }
  return amounts;
}

/** The plan's forced mints placed among the amounts (their minter, amount, hash and time). */
function forcedMints(rng: Rng, plan: Plan, amounts: bigint[]) {
  const scale = pow10(plan.decimals);
  const minters: Array<string | undefined> = amounts.map(() => undefined);
  const hashOf: Array<string | undefined> = amounts.map(() => undefined);
  let pinnedMintT: number | undefined;
  const taken = new Set<number>();
  for (const f of plan.forced) {
    let i = f.index;
    if (i === undefined) do i = rng.int(0, amounts.length - 1); while (taken.has(i));
    taken.add(i);
    minters[i] = f.address;
    if (f.amount !== undefined) amounts[i] = f.amount * scale;
    if (f.hash) hashOf[i] = f.hash;
    if (f.t !== undefined) pinnedMintT = f.t;
  }
  return { minters, hashOf, pinnedMintT };
}

/** Mints front-loaded after the deploy, transfers spread from the first mint to the end. */
function eventTimes(rng: Rng, plan: Plan, mints: number, pinnedMintT: number | undefined) {
  const first = plan.deployT + rng.int(12, 900);
  const span = Math.max(60, Math.min(plan.mintSpan, END - first));
  const mintTimes = Array.from({ length: mints }, () => first + Math.floor(span * rng.next() ** 1.8)).sort((a, b) => a - b);
  if (pinnedMintT !== undefined) mintTimes[0] = pinnedMintT;
  const firstMint = mintTimes[0] ?? END;
  const transferTimes = mints === 0 ? [] : Array.from({ length: plan.transfers },
    () => firstMint + 30 + Math.floor((END - firstMint - 30) * rng.next() ** 1.3)).sort((a, b) => a - b);
  return { mintTimes, transferTimes };
}

/** A transfer between holders (or to a new address), or null when none could be drawn. */
function pickTransfer(rng: Rng, plan: Plan, pool: Pool, holders: HolderSet, balances: Map<string, bigint>) {
  if (holders.size === 0) return null;
  let sender = holders.pick(rng);
  for (let k = 0; k < 5 && FROZEN.has(sender); k++) sender = holders.pick(rng);
  if (FROZEN.has(sender)) return null;
  const balance = balances.get(sender)!;
  let recipient = sender;
  for (let k = 0; k < 10 && recipient === sender; k++) {
    const r = rng.next();
    recipient = r < 0.15 ? holders.pick(rng) : r < 0.4 ? pool.zipf(rng) : pool.uniform(rng);
    if (FROZEN.has(recipient)) recipient = sender;
  }
  if (recipient === sender) return null;
  let amount: bigint;
  if (rng.chance(0.25)) amount = balance;
  else if (plan.decimals === 0) amount = rng.upTo(balance > 1n ? balance / 2n + 1n : 1n);
  else amount = rng.upTo(balance);
  return { sender, recipient, amount };
}

// ---------------------------------------------------------------------------------------------------
// Transactions' gas

const GAS_PRICE_GWEI: Record<string, [number, number]> = {
  eth: [9, 85], avalanche: [25, 320], arbitrum: [0.01, 0.3], bsc: [3, 5], fantom: [12, 420], polygon: [30, 820],
};

function calldata(e: Ev): string {
  const p = e.plan!;
  const base = `data:,{"p":"${p.protocol}","op":"${e.kind}","tick":"${p.tick}"`;
  if (e.kind === 'deploy') return `${base},"max":"${fmt(p.supply, p.decimals)}","lim":"${fmt(p.lim, p.decimals)}"}`;
  return `${base},"amt":"${fmt(e.amount, p.decimals)}"}`;
}

function gasOf(rng: Rng, e: Ev): { gas: number; gasPrice: number } {
  if (e.chain === 'btc') {
    const vsize = e.kind === 'transfer' ? rng.int(190, 320) : e.kind === 'other' ? rng.int(140, 600) : rng.int(150, 210);
    return { gas: e.gas ?? vsize, gasPrice: e.gasPrice ?? rng.int(6, 240) };
  }
  const [lo, hi] = GAS_PRICE_GWEI[e.chain]!;
  const gwei = lo + (hi - lo) * rng.next() ** 2;
  const gasPrice = Math.round(gwei * 1e9 / 1e6) * 1e6;
  const gas = e.kind === 'other' ? rng.int(21000, 180000) : 21000 + 16 * Buffer.byteLength(calldata(e));
  return { gas: e.gas ?? gas, gasPrice: e.gasPrice ?? gasPrice };
}

// ---------------------------------------------------------------------------------------------------

export function buildDemoDataset(): Dataset {
  const rng = new Rng(SEED);
  const pools = addressPools(rng);
  const plans = allPlans(rng, pools);

  // simulate every tick, then a few non-inscription transactions
  const hashes = new Hashes();
  let seq = 0;
  const nextSeq = () => seq++;
  const states = plans.map((p) => simulate(rng, p, pools, hashes, nextSeq));
  const events: Ev[] = states.flatMap((s) => s.events);
  for (let i = 0; i < 45; i++) events.push(otherTransaction(rng, i, pools, hashes, nextSeq));

  placeInBlocks(rng, events);
  // indexing order: created_at, which keeps each chain's block order
  events.sort((a, b) => a.created - b.created);
  const { transactions, movements, deployEv, lastEv } = transactionRows(rng, events);
  const { ticks, balances } = tickRows(rng, states, events, deployEv, lastEv);
  return { chains: CHAINS.map((c) => ({ ...c })), blocks: BLOCKS.map((b) => ({ ...b })), ticks, balances, movements, transactions };
}

/** Address pools: index 0 is the busiest address (Zipf weights). */
function addressPools(rng: Rng): Pools {
  const specials = new Set(Object.values(A).map((a) => a.toLowerCase()));
  const evmList = [A.busy];
  const evmSeen = new Set(evmList.map((a) => a.toLowerCase()));
  while (evmList.length < 6500) {
    const a = evmAddress(rng);
    if (!evmSeen.has(a.toLowerCase()) && !specials.has(a.toLowerCase())) { evmSeen.add(a.toLowerCase()); evmList.push(a); }
  }
  const btcList: string[] = [];
  const btcSeen = new Set<string>();
  while (btcList.length < 3200) {
    const a = btcAddress(rng);
    if (!btcSeen.has(a) && !specials.has(a)) { btcSeen.add(a); btcList.push(a); }
  }
  const evm = new Pool(evmList, 1.05);
  const btc = new Pool(btcList, 1.05);
  const deployers = new Pool(evmList.slice(200, 1400), 0.9);
  const btcDeployers = new Pool(btcList.slice(100, 900), 0.9);
  return {
    evm, btc,
    of: (chain) => (chain === 'btc' ? btc : evm),
    deployer: (r, chain) => (chain === 'btc' ? btcDeployers : deployers).zipf(r),
  };
}

/** The named ticks, then generated ones with unused names. */
function allPlans(rng: Rng, pools: Pools): Plan[] {
  const plans = namedPlans(rng, pools);
  const used = new Set(plans.map((p) => `${p.chain}/${p.protocol}/${p.tick}`));
  const addPlan = (chain: string, protocol: string) => {
    for (;;) {
      const tick = tickName(rng, chain);
      const key = `${chain}/${protocol}/${tick}`;
      if (used.has(key)) continue;
      used.add(key);
      plans.push(genericPlan(rng, chain, protocol, tick, pools));
      return;
    }
  };
  for (const c of CHAINS) for (let i = 0; i < GENERATED[c.chain]!; i++) addPlan(c.chain, PROTOCOLS[c.chain]!);
  for (let i = 0; i < POLYGON_BRC20_EXTRA; i++) addPlan('polygon', 'brc-20');
  return plans;
}

function tickName(rng: Rng, chain: string): string {
  const words = [...(CHAIN_WORDS[chain] ?? []), ...WORDS];
  if (chain === 'btc') {
    const w = rng.chance(0.7) ? rng.pick(words.filter((x) => x.length === 4)) : '';
    return w || Array.from({ length: 4 }, () => rng.pick([...LETTERS])).join('');
  }
  const w = rng.pick(words);
  const r = rng.next();
  return r < 0.12 ? `${w}${rng.int(1, 9)}` : r < 0.18 ? `${w}s` : w;
}

/** A transaction that carries no inscription. */
function otherTransaction(rng: Rng, i: number, pools: Pools, hashes: Hashes, nextSeq: () => number): Ev {
  const chain = rng.pick(['eth', 'avalanche', 'avalanche', 'bsc', 'polygon', 'arbitrum', 'fantom', 'btc']);
  const pool = pools.of(chain);
  const from = i % 9 === 0 ? pool.addresses[0]! : pool.zipf(rng);
  return {
    seq: nextSeq(), kind: 'other', chain, plan: null, t: START + Math.floor((END - START) * rng.next()),
    pinned: false, hash: hashes.fresh(rng, chain), from, to: rng.chance(0.5) ? from : pool.uniform(rng),
    amount: 0n, height: 0, position: 0, created: 0,
  };
}

/** Blocks: per chain, in time order; a pinned event fixes the time of its block. */
function placeInBlocks(rng: Rng, events: Ev[]): void {
  events.sort((a, b) => a.t - b.t || a.seq - b.seq);
  const blockTimes = new Map<string, number>();
  for (const e of events) {
    if (!e.pinned) continue;
    blockTimes.set(`${e.chain}:${heightAt(CLOCKS[e.chain]!, e.t)}`, e.t);
  }
  const cursor = new Map<string, { height: number; position: number }>();
  for (const e of events) {
    const clock = CLOCKS[e.chain]!;
    const h = heightAt(clock, e.t);
    const key = `${e.chain}:${h}`;
    let bt = blockTimes.get(key);
    if (bt === undefined) blockTimes.set(key, (bt = Math.floor(msOfHeight(clock, h) / 1000)));
    const c = cursor.get(e.chain);
    const wide = e.chain === 'btc';
    let position: number;
    if (!c || c.height !== h) position = e.pos ?? rng.int(0, wide ? 2400 : 60);
    else position = Math.max(e.pos ?? 0, c.position + 1 + rng.int(0, wide ? 40 : 6));
    cursor.set(e.chain, { height: h, position });
    e.height = h;
    e.position = position;
    e.t = bt;
    e.created = bt + clock.lag;
  }
}

/** One transaction row per event and its movement rows; each tick's deploy and last event. */
function transactionRows(rng: Rng, events: Ev[]) {
  const movements: MovementInput[] = [];
  const transactions: TransactionInput[] = [];
  const deployEv = new Map<Plan, Ev>();
  const lastEv = new Map<Plan, Ev>();
  for (const e of events) {
    const p = e.plan;
    const created = iso(e.created);
    const { gas, gasPrice } = gasOf(rng, e);
    const amt = p ? fmt(e.amount, p.decimals) : '0';
    transactions.push({
      chain: e.chain, protocol: p?.protocol ?? '', block_height: e.height, position_in_block: e.position,
      block_time: iso(e.t), tx_hash: e.hash, from_address: e.from, to_address: e.to,
      op: p ? e.kind : '', tick: p?.tick ?? '', amt, gas, gas_price: gasPrice, status: 0,
      created_at: created, updated_at: created,
    });
    if (!p) continue;
    const m = (address: string, event: 1 | 2 | 3 | 4, amount: string, operate: string) => movements.push({
      chain: p.chain, protocol: p.protocol, tick: p.tick, address, tx_hash: e.hash, amount, event, operate,
      created_at: created, updated_at: created,
    });
    if (e.kind === 'deploy') {
      m(e.from, 1, '0', 'deploy');
      deployEv.set(p, e);
    } else if (e.kind === 'mint') {
      m(e.to, 2, amt, 'mint');
    } else {
      m(e.from, 4, amt, 'transfer');
      m(e.to, 3, amt, 'transfer');
    }
    lastEv.set(p, e);
  }
  return { transactions, movements, deployEv, lastEv };
}

/** Ticks in deploy (indexing) order, so the record id is the deploy order, and their balances. */
function tickRows(rng: Rng, states: TickState[], events: Ev[], deployEv: Map<Plan, Ev>, lastEv: Map<Plan, Ev>) {
  const order = new Map(events.map((e, i) => [e, i]));
  const ordered = [...states].sort((a, b) => order.get(deployEv.get(a.plan)!)! - order.get(deployEv.get(b.plan)!)!);
  const ticks: TickInput[] = [];
  const balances: BalanceInput[] = [];
  for (const s of ordered) {
    const p = s.plan;
    const d = deployEv.get(p)!;
    const createdAt = p.createdAt ?? d.created;
    const updatedAt = p.nullUpdated ? null : Math.max(createdAt, p.updatedAt ?? lastEv.get(p)!.created);
    ticks.push({
      chain: p.chain, protocol: p.protocol, tick: p.tick, name: p.name, limit_per_mint: fmt(p.lim, p.decimals),
      deploy_by: p.deployer, total_supply: fmt(p.supply, p.decimals), deploy_hash: d.hash, deploy_time: iso(d.t),
      transfer_type: p.transferType, decimals: p.decimals, created_at: iso(createdAt),
      updated_at: updatedAt === null ? null : iso(updatedAt),
    });
    for (const [address, balance] of s.balances) {
      // brc-20 on btc: part of some balances is inscribed as transferable, so not available
      const available = p.chain === 'btc' && balance > 1n && rng.chance(0.12) ? balance - rng.upTo(balance / 2n) : balance;
      balances.push({
        chain: p.chain, protocol: p.protocol, tick: p.tick, address,
        balance: fmt(balance, p.decimals), available: fmt(available, p.decimals),
      });
    }
  }
  return { ticks, balances };
}
