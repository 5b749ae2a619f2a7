import type { Sql } from '../../src/db/client.js';
import { loadDataset, type ChainInput, type Dataset, type TickInput } from '../../src/db/load.js';

// A small fluent builder for test data. It keeps balances, movements and transactions consistent the
// way an indexer would (a mint credits the minter and logs a movement and a transaction), so counters
// computed by the database can be compared with what the test expects.

export const chainRows: ChainInput[] = [
  { chain: 'eth', chain_id: 1, outer_chain: 'eth', name: 'Ethereum', logo: 'https://s3.indexs.io/chain/icon/eth.png', network_id: 1, ext: '', display_order: 1 },
  { chain: 'avalanche', chain_id: 43114, outer_chain: 'avax', name: 'Avalanche', logo: 'https://s3.indexs.io/chain/icon/avalanche.png', network_id: 43114, ext: '', display_order: 2 },
  { chain: 'arbitrum', chain_id: 42161, outer_chain: 'ETH', name: 'Arbitrum One', logo: 'https://s3.indexs.io/chain/icon/arbitrum.png', network_id: 42161, ext: '', display_order: 3 },
  { chain: 'bsc', chain_id: 56, outer_chain: 'BSC', name: 'BNB Smart Chain Mainnet', logo: 'https://s3.indexs.io/chain/icon/bsc.png', network_id: 56, ext: '', display_order: 4 },
  { chain: 'fantom', chain_id: 250, outer_chain: 'FTM', name: 'Fantom Opera', logo: 'https://s3.indexs.io/chain/icon/fantom.png', network_id: 250, ext: '', display_order: 5 },
  { chain: 'polygon', chain_id: 137, outer_chain: 'Polygon', name: 'Polygon Mainnet', logo: 'https://s3.indexs.io/chain/icon/polygon.png', network_id: 137, ext: '', display_order: 6 },
  { chain: 'btc', chain_id: 0, outer_chain: 'btc', name: 'BTC', logo: 'https://s3.indexs.io/chain/icon/btc.png', network_id: 0, ext: '', display_order: 7 },
];

// The holders the fixtures share, by name. Mixed case on purpose: addresses are matched whatever their case and
// answered in the spelling stored.
export const alice = '0xAaAa00000000000000000000000000000000000A';
export const bob = '0xbBbB00000000000000000000000000000000000B';
export const carol = '0xCcCc00000000000000000000000000000000000C';
export const dave = '0xDdDd00000000000000000000000000000000000D';
export const erin = '0xEeEe00000000000000000000000000000000000E';
/** Minted, then sent everything away: a balance row of zero. */
export const drained = '0x2222000000000000000000000000000000000000';

export const unix = (seconds: number) => new Date(seconds * 1000).toISOString();

type TickSpec = Partial<TickInput> & Pick<TickInput, 'chain' | 'protocol' | 'tick'>;

let hashCounter = 0;
/** A deterministic 0x-prefixed 32-byte hash for fixtures. */
export const fakeHash = (seed = ++hashCounter) => `0x${seed.toString(16).padStart(64, '0')}`;

export class Fixture {
  readonly data: Dataset = { chains: [...chainRows], blocks: [], ticks: [], balances: [], movements: [], transactions: [] };
  private height = 40_000_000;
  private clock = Date.UTC(2024, 0, 15, 9, 0, 0) / 1000;
  private balances = new Map<string, bigint>();

  tick(spec: TickSpec): TickInput {
    const row: TickInput = {
      name: spec.tick,
      limit_per_mint: '1000',
      deploy_by: '0x1111111111111111111111111111111111111111',
      total_supply: '21000000',
      deploy_hash: fakeHash(),
      deploy_time: unix(this.clock),
      transfer_type: 0,
      decimals: 0,
      created_at: unix(this.clock),
      updated_at: null,
      ...spec,
    };
    this.data.ticks.push(row);
    return row;
  }

  private tx(t: TickInput, op: string, from: string, to: string, amt: string, hash: string) {
    this.clock += 60;
    this.data.transactions.push({
      chain: t.chain, protocol: t.protocol, block_height: ++this.height, position_in_block: 0,
      block_time: unix(this.clock), tx_hash: hash, from_address: from, to_address: to, op, tick: t.tick, amt,
      gas: 21000, gas_price: 25000000000, status: 1, created_at: unix(this.clock), updated_at: unix(this.clock),
    });
  }

  private credit(t: TickInput, address: string, delta: bigint) {
    const key = JSON.stringify([t.chain, t.protocol, t.tick, address]);
    const next = (this.balances.get(key) ?? 0n) + delta;
    if (next < 0n) throw new Error(`fixture would make ${address} negative`);
    this.balances.set(key, next);
  }

  /** Integer amounts only (fixtures with fractions write balances directly). */
  mint(t: TickInput, address: string, amount: string, hash = fakeHash()) {
    this.tx(t, 'mint', address, address, amount, hash);
    this.data.movements.push({ chain: t.chain, protocol: t.protocol, tick: t.tick, address, tx_hash: hash, amount, event: 2, operate: 'mint', created_at: unix(this.clock), updated_at: unix(this.clock) });
    this.credit(t, address, BigInt(amount));
    return this;
  }

  transfer(t: TickInput, from: string, to: string, amount: string, hash = fakeHash()) {
    this.tx(t, 'transfer', from, to, amount, hash);
    const at = unix(this.clock);
    this.data.movements.push({ chain: t.chain, protocol: t.protocol, tick: t.tick, address: from, tx_hash: hash, amount, event: 4, operate: 'transfer', created_at: at, updated_at: at });
    this.data.movements.push({ chain: t.chain, protocol: t.protocol, tick: t.tick, address: to, tx_hash: hash, amount, event: 3, operate: 'transfer', created_at: at, updated_at: at });
    this.credit(t, from, -BigInt(amount));
    this.credit(t, to, BigInt(amount));
    return this;
  }

  block(chain: string, number: string, time: string, indexedAt: string) {
    this.data.blocks.push({ chain, block_number: number, block_time: time, indexed_at: indexedAt });
    return this;
  }

  async load(sql: Sql) {
    for (const [key, balance] of this.balances) {
      const [chain, protocol, tick, address] = JSON.parse(key) as string[];
      this.data.balances.push({ chain: chain!, protocol: protocol!, tick: tick!, address: address!, balance: String(balance), available: String(balance) });
    }
    await loadDataset(sql, this.data);
  }
}
