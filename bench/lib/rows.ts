// COPY text-format lines of every table, generated tick by tick from the plan and the simulation.
// Columns are listed next to each generator; generated columns (*_key, progress) and the counters
// (minted, holders, tx_cnt: refresh_counters() computes them) are never written.
import { fmix32, mixSeed } from './rng.js';
import {
  BENCH_NOTABLE, BLOCKS, CHAINS, END, holderSlot, chainRows,
  type AddressFamily, type ChainInfo, type Plan, type TickPlan,
} from './plan.js';
import { EV_DEPLOY, EV_MINT, STREAM, eventTime, mintedOf, simulate, tickRng, type SimState } from './simulate.js';
import type { Rng } from './rng.js';

// ---------------------------------------------------------------------------------------------------
// Text format

/** Escapes a value for COPY's text format (backslash, tab, newline, carriage return). */
function copyText(s: string): string {
  return /[\\\t\n\r]/.test(s)
    ? s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : s;
}
const NULL = '\\N';

const PAD2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
let isoDay = Number.NaN;
let isoDayPrefix = '';
/** unix seconds (integer) → ISO-8601 UTC; toISOString() per row was the generator's main cost */
function iso(t: number): string {
  const day = Math.floor(t / 86400);
  if (day !== isoDay) { isoDay = day; isoDayPrefix = new Date(day * 86_400_000).toISOString().slice(0, 11); }
  const s = t - day * 86400;
  return `${isoDayPrefix}${PAD2[Math.floor(s / 3600)]}:${PAD2[Math.floor(s / 60) % 60]}:${PAD2[s % 60]}Z`;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);
/** base units → plain decimal string, trailing fractional zeros trimmed (as the demo dataset writes them) */
function fmt(v: bigint, decimals: number): string {
  if (decimals === 0) return v.toString();
  const scale = pow10(decimals);
  const int = v / scale;
  const frac = (v % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int.toString();
}

/** The smallest "nice" number (1, 2, 2.1, 5 × 10^e) ≥ k. */
function niceAtLeast(k: bigint): bigint {
  for (let e = 0n; ; e++) {
    for (const m of [10n, 20n, 21n, 50n]) {
      const v = (m * 10n ** e) / 10n;
      if (v >= k && (m * 10n ** e) % 10n === 0n) return v;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Addresses and hashes: pure functions of (family, index) and of the transaction number

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
/** byte b with case bits m (2 bits, one per nibble) → two hex digits, letters upper-cased by the bits */
const HEX_CASED = Array.from({ length: 1024 }, (_, x) => {
  const b = x >> 2;
  const m = x & 3;
  const [h, l] = HEX[b]!.split('') as [string, string];
  return (m & 2 ? h.toUpperCase() : h) + (m & 1 ? l.toUpperCase() : l);
});
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function words(first: number, n: number): number[] {
  const w = [first];
  for (let i = 1; i < n; i++) w.push(fmix32((first + Math.imul(i, 0x9e3779b9)) >>> 0));
  return w;
}

/** A flat copy of a string built by many concatenations (V8 keeps those as ropes, re-walked on every use). */
const flat = (s: string): string => Buffer.from(s, 'latin1').toString('latin1');

class Addresses {
  private readonly cache: Array<string | undefined>;
  private readonly salt: number;
  constructor(readonly fam: AddressFamily, seed: number) {
    this.cache = new Array(fam.whales + fam.general);
    this.salt = mixSeed(seed, fam.btc ? 0xb7c : 0xe7f);
  }
  /** distinct for distinct indices: the first 32 bits are a bijection of the index */
  at(i: number): string {
    let a = this.cache[i];
    if (a === undefined) this.cache[i] = a = flat(this.fam.btc ? this.btc(i) : this.evm(i));
    return a;
  }
  private evm(i: number): string {
    const w = words(fmix32((i ^ this.salt) >>> 0), 7);
    let s = '0x';
    // mixed case like an EIP-55 checksum (not a real one: that needs keccak)
    for (let k = 0; k < 20; k++) {
      const byte = (w[k >> 2]! >>> ((k & 3) * 8)) & 0xff;
      const bits = (w[5 + (k >> 4)]! >>> ((k & 15) * 2)) & 3;
      s += HEX_CASED[(byte << 2) | bits]!;
    }
    return s;
  }
  private btc(i: number): string {
    const w = words(fmix32((i ^ this.salt) >>> 0), 11);
    const taproot = (w[10]! & 0xff) < 140;
    const n = taproot ? 58 : 38;
    let s = taproot ? 'bc1p' : 'bc1q';
    for (let k = 0; k < n; k++) {
      // 5 bits per character, read across words
      const bit = k * 5;
      const lo = w[bit >> 5]! >>> (bit & 31);
      const hi = (bit & 31) > 27 ? w[(bit >> 5) + 1]! << (32 - (bit & 31)) : 0;
      s += BECH32[(lo | hi) & 31]!;
    }
    return s;
  }
}

/** Transaction hash number n (the transaction's id - 1): unique, EVM `0x…`, btc without prefix. */
const hashBytes = Buffer.alloc(32);
function txHash(n: number, btc: boolean, salt: number): string {
  const first = fmix32((n ^ salt) >>> 0);
  hashBytes.writeUInt32BE(first, 0);
  for (let k = 1; k < 8; k++) hashBytes.writeUInt32BE(fmix32((first + Math.imul(k, 0x9e3779b9)) >>> 0), k * 4);
  // Buffer → hex gives a flat string; a rope of 32 pieces costs more to encode into every row than to build
  const hex = hashBytes.toString('hex');
  return btc ? hex : `0x${hex}`;
}

// ---------------------------------------------------------------------------------------------------
// Blocks

function heightAt(c: ChainInfo, t: number): number {
  return c.lastHeight - Math.floor((c.lastMs - t * 1000) / c.msPerBlock);
}
function blockTimeOf(c: ChainInfo, h: number): number {
  return Math.floor((c.lastMs - (c.lastHeight - h) * c.msPerBlock) / 1000);
}

// ---------------------------------------------------------------------------------------------------
// Generators

export class Rows {
  readonly evm: Addresses;
  readonly btc: Addresses;
  private readonly hashSalt: number;
  constructor(readonly plan: Plan) {
    this.evm = new Addresses(plan.evm, plan.seed);
    this.btc = new Addresses(plan.btc, plan.seed);
    this.hashSalt = mixSeed(plan.seed, 0x4a54);
  }

  private addrs(t: TickPlan): Addresses { return t.chain.btc ? this.btc : this.evm; }
  holder(t: TickPlan, j: number): string {
    const a = this.addrs(t);
    const slot = holderSlot(t, a.fam, j);
    return slot < 0 ? BENCH_NOTABLE.busiestAddress : a.at(slot);
  }
  deployer(t: TickPlan): string {
    return typeof t.deployer === 'string' ? t.deployer : this.addrs(t).at(t.deployer);
  }
  hash(t: TickPlan, k: number): string {
    if (k === 0 && t.deployHash) return t.deployHash;
    return txHash(t.txBase + k, t.chain.btc, this.hashSalt);
  }

  static readonly chainsColumns = ['chain', 'chain_id', 'outer_chain', 'name', 'logo', 'network_id', 'ext', 'display_order'];
  *chains(): Generator<string> {
    for (const c of chainRows) {
      yield `${copyText(c.chain)}\t${c.chain_id}\t${copyText(c.outer_chain)}\t${copyText(c.name)}\t${copyText(c.logo)}\t${c.network_id}\t${copyText(c.ext)}\t${c.display_order}\n`;
    }
  }

  static readonly blocksColumns = ['chain', 'block_number', 'block_time', 'indexed_at'];
  *blocks(): Generator<string> {
    for (const b of BLOCKS) yield `${b.chain}\t${b.block_number}\t${b.block_time}\t${b.indexed_at}\n`;
  }

  static readonly ticksColumns = ['id', 'chain', 'protocol', 'tick', 'name', 'limit_per_mint', 'deploy_by', 'total_supply',
    'deploy_hash', 'deploy_time', 'transfer_type', 'decimals', 'created_at', 'updated_at'];
  *ticks(): Generator<string> {
    const seed = this.plan.seed;
    for (const t of this.plan.ticks) {
      const minted = mintedOf(seed, t);
      let supply: bigint;
      if (t.sats) supply = 2_100_000_000_000_000n * pow10(18);
      else if (t.holders === 0) supply = t.lim * niceAtLeast(BigInt(tickRng(seed, t, STREAM.supply).int(100, 10_000_000)));
      else if (t.fullyMinted) supply = minted;
      else {
        const target = (minted * 1_000_000n + BigInt(t.progressPpm) - 1n) / BigInt(t.progressPpm);
        supply = t.lim * niceAtLeast((target + t.lim - 1n) / t.lim);
      }
      const c = t.chain;
      const deployBlock = blockTimeOf(c, heightAt(c, t.deployT));
      const created = deployBlock + c.lag;
      const n = t.holders + t.transfers;
      const last = n === 0 ? deployBlock : blockTimeOf(c, heightAt(c, eventTime(t, n)));
      const updated = t.nullUpdated ? NULL : iso(Math.max(created, last + c.lag));
      yield `${t.id}\t${c.chain}\t${t.protocol}\t${copyText(t.tick)}\t${copyText(t.name)}\t${fmt(t.lim, t.decimals)}\t` +
        `${this.deployer(t)}\t${fmt(supply, t.decimals)}\t${this.hash(t, 0)}\t${iso(deployBlock)}\t${t.transferType}\t` +
        `${t.decimals}\t${iso(created)}\t${updated}\n`;
    }
  }

  static readonly balancesColumns = ['tick_id', 'address', 'balance', 'available', 'updated_at'];
  *balances(): Generator<string> {
    const seed = this.plan.seed;
    const state: SimState = { balances: [], lastT: new Uint32Array(0) };
    for (const t of this.plan.ticks) {
      if (t.holders === 0) continue;
      state.balances = new Array<bigint>(t.holders);
      state.lastT = new Uint32Array(t.holders);
      for (const _ of simulate(seed, t, state)) { /* run to the end */ }
      const rng = tickRng(seed, t, STREAM.balance);
      const c = t.chain;
      for (let j = 0; j < t.holders; j++) {
        const b = state.balances[j]!;
        // brc-20: part of some balances is inscribed as transferable, so not available
        const available = c.btc && b > 1n && rng.chance(0.12) ? b - rng.upTo(b / 2n) : b;
        const at = blockTimeOf(c, heightAt(c, state.lastT[j]!)) + c.lag;
        yield `${t.id}\t${this.holder(t, j)}\t${fmt(b, t.decimals)}\t${fmt(available, t.decimals)}\t${iso(at)}\n`;
      }
    }
  }

  static readonly movementsColumns = ['id', 'tick_id', 'address', 'tx_hash', 'amount', 'event', 'operate', 'created_at', 'updated_at'];
  *movements(): Generator<string> {
    const seed = this.plan.seed;
    for (const t of this.plan.ticks) {
      let id = t.moveBase + 1;
      const c = t.chain;
      for (const e of simulate(seed, t)) {
        const at = iso(blockTimeOf(c, heightAt(c, e.t)) + c.lag);
        const hash = this.hash(t, e.k);
        const tail = `\t${at}\t${at}\n`;
        if (e.kind === EV_DEPLOY) {
          yield `${id++}\t${t.id}\t${this.deployer(t)}\t${hash}\t0\t1\tdeploy${tail}`;
        } else if (e.kind === EV_MINT) {
          yield `${id++}\t${t.id}\t${this.holder(t, e.to)}\t${hash}\t${fmt(e.amount, t.decimals)}\t2\tmint${tail}`;
        } else {
          const amt = fmt(e.amount, t.decimals);
          yield `${id++}\t${t.id}\t${this.holder(t, e.from)}\t${hash}\t${amt}\t4\ttransfer${tail}`;
          yield `${id++}\t${t.id}\t${this.holder(t, e.to)}\t${hash}\t${amt}\t3\ttransfer${tail}`;
        }
      }
      if (id - t.moveBase - 1 !== 1 + t.holders + 2 * t.transfers) {
        throw new Error(`tick ${t.id}: ${id - t.moveBase - 1} movements, planned ${1 + t.holders + 2 * t.transfers}`);
      }
    }
  }

  /**
   * The balance history (sql/011): one row per movement leg (ids = the leg's movement id; the deploy has
   * none) with the balance after it, the leg's block height, and valid_to (the height of the holder's next
   * change) computed here: a first pass of the simulation finds each leg's next height, a second writes the
   * rows, so the load's link_balance_history() has nothing left to update. available = balance.
   */
  static readonly historyColumns = ['id', 'tick_id', 'address', 'block_height', 'valid_to', 'amount', 'balance', 'available',
    'event', 'tx_hash', 'created_at'];
  *history(): Generator<string> {
    const seed = this.plan.seed;
    for (const t of this.plan.ticks) {
      if (t.holders === 0) continue;
      const c = t.chain;
      const legs = t.holders + 2 * t.transfers;
      const next = new Float64Array(legs).fill(-1);
      const last = new Int32Array(t.holders).fill(-1);
      let i = 0;
      for (const e of simulate(seed, t)) {
        if (e.kind === EV_DEPLOY) continue;
        const h = heightAt(c, e.t);
        const touch = (j: number) => {
          if (last[j]! >= 0) next[last[j]!] = h;
          last[j] = i++;
        };
        if (e.kind === EV_MINT) touch(e.to);
        else { touch(e.from); touch(e.to); }
      }
      const state: SimState = { balances: new Array<bigint>(t.holders), lastT: new Uint32Array(t.holders) };
      i = 0;
      let id = t.moveBase + 2;
      for (const e of simulate(seed, t, state)) {
        if (e.kind === EV_DEPLOY) continue;
        const h = heightAt(c, e.t);
        const at = iso(blockTimeOf(c, h) + c.lag);
        const hash = this.hash(t, e.k);
        const amt = fmt(e.amount, t.decimals);
        const row = (j: number, sign: string, event: number) => {
          const b = fmt(state.balances[j]!, t.decimals);
          const to = next[i++]!;
          return `${id++}\t${t.id}\t${this.holder(t, j)}\t${h}\t${to < 0 ? NULL : to}\t${sign}${amt}\t${b}\t${b}\t${event}\t${hash}\t${at}\n`;
        };
        if (e.kind === EV_MINT) yield row(e.to, '', 2);
        else {
          yield row(e.from, e.amount === 0n ? '' : '-', 4);
          yield row(e.to, '', 3);
        }
      }
      if (i !== legs) throw new Error(`tick ${t.id}: ${i} history rows, planned ${legs}`);
    }
  }

  static readonly transactionsColumns = ['id', 'chain', 'protocol', 'block_height', 'position_in_block', 'block_time',
    'tx_hash', 'from_address', 'to_address', 'op', 'tick', 'amt', 'gas', 'gas_price', 'status', 'created_at', 'updated_at'];
  *transactions(): Generator<string> {
    const seed = this.plan.seed;
    for (const t of this.plan.ticks) {
      const c = t.chain;
      const rng = tickRng(seed, t, STREAM.tx);
      const tick = copyText(t.tick);
      for (const e of simulate(seed, t)) {
        const h = heightAt(c, e.t);
        const bt = blockTimeOf(c, h);
        const at = iso(bt + c.lag);
        let op: string;
        let from: string;
        let to: string;
        let amt: string;
        if (e.kind === EV_DEPLOY) { op = 'deploy'; from = to = this.deployer(t); amt = '0'; }
        else if (e.kind === EV_MINT) { op = 'mint'; from = to = this.holder(t, e.to); amt = fmt(e.amount, t.decimals); }
        else { op = 'transfer'; from = this.holder(t, e.from); to = this.holder(t, e.to); amt = fmt(e.amount, t.decimals); }
        const [gas, gasPrice] = gasOf(c, rng, false);
        yield `${t.txBase + e.k + 1}\t${c.chain}\t${t.protocol}\t${h}\t${rng.int(0, c.width)}\t${iso(bt)}\t` +
          `${this.hash(t, e.k)}\t${from}\t${to}\t${op}\t${tick}\t${amt}\t${gas}\t${gasPrice}\t0\t${at}\t${at}\n`;
      }
      yield* this.noise(t);
    }
  }

  /** Plain (non-inscription) transactions between this tick's deploy and the next one's. */
  private *noise(t: TickPlan): Generator<string> {
    if (t.noise === 0) return;
    const rng = tickRng(this.plan.seed, t, STREAM.noise);
    const base = t.txBase + 1 + t.holders + t.transfers;
    for (let k = 0; k < t.noise; k++) {
      const c = CHAINS[rng.weighted(NOISE_CHAINS)]!;
      const a = c.btc ? this.btc : this.evm;
      const pool = a.fam.whales + a.fam.general;
      // senders skewed towards whales and early addresses, recipients uniform
      const from = a.at(rng.chance(0.3) ? rng.int(0, a.fam.whales - 1) : Math.floor(pool * rng.next() ** 3));
      const to = rng.chance(0.1) ? from : a.at(rng.int(0, pool - 1));
      const time = Math.min(END, t.noiseT0 + Math.floor((t.noiseT1 - t.noiseT0) * rng.next()));
      const h = heightAt(c, time);
      const bt = blockTimeOf(c, h);
      const at = iso(bt + c.lag);
      const [gas, gasPrice] = gasOf(c, rng, true);
      const n = base + k;
      yield `${n + 1}\t${c.chain}\t\t${h}\t${rng.int(0, c.width)}\t${iso(bt)}\t${txHash(n, c.btc, this.hashSalt)}\t` +
        `${from}\t${to}\t\t\t0\t${gas}\t${gasPrice}\t0\t${at}\t${at}\n`;
    }
  }
}

const NOISE_CHAINS = (() => {
  let s = 0;
  return CHAINS.map((c) => (s += c.weight));
})();

const GAS_PRICE_GWEI: Record<string, [number, number]> = {
  eth: [9, 85], avalanche: [25, 320], arbitrum: [0.01, 0.3], bsc: [3, 5], fantom: [12, 420], polygon: [30, 820],
};

function gasOf(c: ChainInfo, rng: Rng, plain: boolean): [number, number] {
  if (c.btc) return [plain ? rng.int(140, 600) : rng.int(150, 320), rng.int(6, 240)];
  const [lo, hi] = GAS_PRICE_GWEI[c.chain]!;
  const gwei = lo + (hi - lo) * rng.next() ** 2;
  return [plain ? rng.int(21_000, 180_000) : 21_000 + 16 * rng.int(60, 140), Math.round((gwei * 1e9) / 1e6) * 1e6];
}

