import type { TickInput, TransactionInput } from '../../src/db/load.js';
import type { TestDatabase } from './db.js';
import { crazydogDeployer, crazydogHash, lobbyDeployer, lobbyHash, tomrayHash } from './documented.js';
import { alice, bob, carol, dave, drained, erin, Fixture, fakeHash, unix } from './fixtures.js';

// The rows behind the v2 methods beyond the eight of the spec (test/rpc/lookups.test.ts and
// test/rpc/chain-stats.test.ts): the documented avalanche records (crazydog, lobby, tomray), balances on bsc,
// names for the prefix search, one name on two chains, fantom transactions at known times before
// activityEnd, and transferable UTXOs of lobby. The tests' expected answers are computed by hand from them.

export const scripted = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
export const satsHash = '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333';
export const BTC_HOLDER = 'bc1qhxzmcv4ffr9tvdw0s3jn54khce6mua7lqqqqqq'; // bech32 characters only

// fantom activity: windows end at activityEnd, the block time of the newest fantom transaction
const activityEnd = Date.UTC(2024, 2, 1, 12, 0, 0);
const at = (hoursBefore: number) => new Date(activityEnd - hoursBefore * 3_600_000).toISOString();

function rawTx(spec: Partial<TransactionInput> & Pick<TransactionInput, 'chain' | 'block_height' | 'block_time'>): TransactionInput {
  return {
    protocol: '', position_in_block: 0, tx_hash: fakeHash(), from_address: alice, to_address: bob, op: '', tick: '', amt: '0',
    gas: 21000, gas_price: 1, status: 1, created_at: spec.block_time, updated_at: spec.block_time, ...spec,
  };
}

export interface Records {
  /** The rows as written (tests look up transactions in fixture.data). */
  fixture: Fixture;
  ticks: Record<string, TickInput>;
}

/** Loads the records into the test database. */
export async function loadRecords(db: TestDatabase): Promise<Records> {
  const f = new Fixture();
  const ticks: Record<string, TickInput> = {};
  // avalanche: the documented records
  ticks.crazydog = f.tick({
    chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog', name: 'crazydog', limit_per_mint: '21000000',
    deploy_by: crazydogDeployer, total_supply: '21000000', deploy_hash: crazydogHash, deploy_time: unix(1704152964),
    transfer_type: 1, created_at: unix(1704524337), updated_at: unix(1704524337),
  });
  f.mint(ticks.crazydog, crazydogDeployer, '5');
  ticks.tomray = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'tomray', total_supply: '1000', limit_per_mint: '1', transfer_type: 2, deploy_hash: tomrayHash });
  f.mint(ticks.tomray, scripted, '13');
  ticks.avas = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'avas' });
  f.mint(ticks.avas, scripted, '2000');
  for (let i = 0; i < 5; i++) f.mint(ticks.avas, carol, '1'); // more avalanche blocks than inds_chainBlockStat lists
  ticks.lobby = f.tick({
    chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', name: 'Lobby', total_supply: '2100000', deploy_by: lobbyDeployer,
    deploy_hash: lobbyHash, transfer_type: 1, deploy_time: '2023-12-27T08:02:50.000Z', created_at: '2023-12-27T08:02:56.000Z',
    updated_at: '2024-02-09T11:48:00.000Z',
  });
  // the lobby deploy: a transaction and its movement (amount 0)
  f.data.transactions.push(rawTx({
    chain: 'avalanche', protocol: 'asc-20', op: 'deploy', tick: 'lobby', block_height: 39585640, position_in_block: 56,
    block_time: '2023-12-27T08:02:50.000Z', tx_hash: lobbyHash, from_address: lobbyDeployer, to_address: lobbyDeployer,
    gas: 40000, gas_price: 25000000000,
  }));
  f.data.movements.push({
    chain: 'avalanche', protocol: 'asc-20', tick: 'lobby', address: lobbyDeployer, tx_hash: lobbyHash, amount: '0', event: 1,
    operate: 'deploy', created_at: '2023-12-27T08:02:56.000Z', updated_at: '2023-12-27T08:02:56.000Z',
  });
  f.mint(ticks.lobby, scripted, '600'); // avalanche total of scripted: 13 + 2000 + 600 = 2613
  f.mint(ticks.lobby, alice, '50').transfer(ticks.lobby, alice, bob, '20'); // lobby: A 30, B 20 (A's UTXOs below)
  // bsc: 1000 + 140 = 1140 for scripted; Z minted then sent everything away (a zero balance row)
  ticks.bscs = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'bscs', transfer_type: 2 });
  ticks.cake = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'cake', transfer_type: 1 });
  f.mint(ticks.bscs, scripted, '1000').mint(ticks.cake, scripted, '140');
  f.mint(ticks.cake, drained, '7').transfer(ticks.cake, drained, alice, '7');
  // names for the prefix search: "sat" exact, "satoshi" with the most holders, "sats" on btc; LIKE characters
  ticks.sats = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'sats', deploy_hash: satsHash, deploy_by: BTC_HOLDER });
  ticks.sat = f.tick({ chain: 'btc', protocol: 'brc-20', tick: 'sat' });
  ticks.satoshi = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'satoshi' });
  f.mint(ticks.sats, BTC_HOLDER, '10').mint(ticks.sats, 'bc1qsecond00000000000000000000000000000000', '10');
  for (const holder of [alice, bob, carol]) f.mint(ticks.satoshi, holder, '1');
  ticks.gm_gm = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'gm_gm' });
  ticks.gmxgm = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'gmxgm' });
  // one name on two chains
  ticks.dupEth = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'dup' });
  ticks.dupBsc = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'dup' });
  // fantom: two ticks, two holders, and raw transactions at known times around T
  ticks.ftmx = f.tick({ chain: 'fantom', protocol: 'erc-20', tick: 'ftmx' });
  ticks.ftmy = f.tick({ chain: 'fantom', protocol: 'erc-20', tick: 'ftmy' });
  f.mint(ticks.ftmx, alice, '100').mint(ticks.ftmx, bob, '50');
  const ftm = (height: number, hoursBefore: number, from: string, to: string, op: string, tick: string, position = 0) =>
    f.data.transactions.push(rawTx({
      chain: 'fantom', protocol: tick ? 'erc-20' : '', block_height: 50_000_000 + height, position_in_block: position,
      block_time: at(hoursBefore), from_address: from, to_address: to, op, tick,
    }));
  ftm(1000, 0, alice, bob, 'mint', 'ftmx'); //      current window (T-24h, T]
  ftm(999, 1, alice, alice, 'transfer', 'ftmx');
  ftm(990, 23, carol, dave, '', '');
  ftm(990, 23, bob, carol, 'transfer', 'ftmy', 1);
  ftm(980, 24, alice, bob, 'mint', 'ftmx'); //      previous window (T-48h, T-24h]
  ftm(970, 47, erin, erin, 'deploy', 'ftmx');
  ftm(960, 48, alice, alice, 'mint', 'ftmx'); //      older
  ftm(950, 100, alice, alice, 'mint', 'ftmx');
  // indexed blocks: avalanche as documented; polygon has indexed nothing
  f.block('avalanche', '40433785', '2024-01-16T10:18:46Z', '2024-01-16T10:19:00Z');
  f.block('btc', '830439', '2024-02-14T15:33:22Z', '2024-02-14T15:55:39Z');
  await f.load(db.sql);
  // transferable UTXOs of lobby (transfer_type 1) for A: two unspent, one spent
  await db.sql`
    INSERT INTO utxos (tick_id, address, root_hash, amount, status, created_at, updated_at)
    SELECT t.id, u.address, u.root_hash, u.amount::numeric, u.status::smallint, now(), now()
      FROM ticks t, (VALUES (${alice}, ${fakeHash(9001)}, '10', 1), (${alice}, ${fakeHash(9002)}, '20', 1),
                            (${alice}, ${fakeHash(9003)}, '5', 2)) AS u (address, root_hash, amount, status)
     WHERE t.chain = 'avalanche' AND t.tick = 'lobby'`;
  return { fixture: f, ticks };
}
