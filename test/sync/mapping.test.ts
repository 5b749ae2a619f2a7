import { describe, expect, it } from 'vitest';
import { BadRowError, isZoneName, mapBalance, mapBalanceTxn, mapMovement, mapTick, normalizeDecimal, normalizeHash, parseZone, wallToUtc } from '../../src/sync/mapping.js';
import { parseOptions } from '../../src/sync/options.js';

// The source → read-model mapping, value by value (pure functions; the database tests cover the rest).

describe('sync mapping', () => {
  it('tx_hash: 32 raw bytes, 0x text of older rows, bare hex text, NULL', () => {
    const hex = 'ab'.repeat(32);
    expect(normalizeHash(Buffer.from(hex, 'hex'))).toBe(`0x${hex}`);
    expect(normalizeHash(Buffer.from(`0x${hex.toUpperCase()}`, 'latin1'))).toBe(`0x${hex}`);
    expect(normalizeHash(Buffer.from(hex, 'latin1'))).toBe(`0x${hex}`);
    expect(normalizeHash(`0X${hex}`.replace('0X', '0x'))).toBe(`0x${hex}`);
    expect(normalizeHash(null)).toBe('');
  });

  it('balance_txn: signed change, balance after it, the height attached by the source read (or none), bad rows named', () => {
    const row = { id: 7, chain: 'ETH', protocol: 'erc-20', tick: 'Pepe', event: 3, address: '0xAbC', amount: '-300.500000000000000000',
      available: '0.000000000000000000', balance: '1199.750000000000000000', tx_hash: Buffer.from('cd'.repeat(32), 'hex'),
      created_at: '2024-03-01 20:01:00', block_height: '1000005' };
    expect(mapBalanceTxn(row, { zoneMinutes: 480 })).toEqual({
      id: '7', chain: 'eth', protocol: 'erc-20', tick: 'pepe', address: '0xAbC', block_height: '1000005', amount: '-300.5',
      balance: '1199.75', available: '0', event: 3, tx_hash: `0x${'cd'.repeat(32)}`, created_at: '2024-03-01T12:01:00.000Z',
    });
    // a binlog row: no height (the apply takes it from the read model's transactions)
    expect(mapBalanceTxn({ ...row, block_height: undefined }, { zoneMinutes: 480 }).block_height).toBeNull();
    expect(mapBalanceTxn({ ...row, block_height: null }, { zoneMinutes: 480 }).block_height).toBeNull();
    expect(() => mapBalanceTxn({ ...row, balance: '-1' }, { zoneMinutes: 0 })).toThrow(/balance_txn row 7: negative balance -1/);
    expect(() => mapBalanceTxn({ ...row, event: 9 }, { zoneMinutes: 0 })).toThrow(BadRowError);
    expect(() => mapBalanceTxn({ ...row, address: '' }, { zoneMinutes: 0 })).toThrow(/empty address/);
  });

  it('DECIMAL(38,18) stays exact, without trailing zeros', () => {
    expect(normalizeDecimal('99999999999999999999.999999999999999999')).toBe('99999999999999999999.999999999999999999');
    expect(normalizeDecimal('1000.000000000000000000')).toBe('1000');
    expect(normalizeDecimal('-0.500000000000000000')).toBe('-0.5');
    expect(normalizeDecimal('-0.000000000000000000')).toBe('0');
    expect(normalizeDecimal('0.000000000000000001')).toBe('0.000000000000000001');
  });

  it('times: wall-clock text of the declared zone → UTC', () => {
    expect(parseZone('+08:00')).toBe(480);
    expect(parseZone('-05:30')).toBe(-330);
    expect(parseZone('Asia/Shanghai')).toBeNull(); // a name, not an offset (see below)
    expect(wallToUtc('2024-03-01 20:01:00', 480)).toBe('2024-03-01T12:01:00.000Z');
    expect(wallToUtc('2024-03-01 07:01:00', -300)).toBe('2024-03-01T12:01:00.000Z');
    expect(wallToUtc('0000-00-00 00:00:00', 0)).toBeNull();
  });

  it('times: a named zone follows daylight-saving time', () => {
    expect(isZoneName('America/New_York')).toBe(true);
    expect(isZoneName('Mars/Olympus')).toBe(false);
    expect(wallToUtc('2024-01-15 07:00:00', 0, 'America/New_York')).toBe('2024-01-15T12:00:00.000Z'); // EST, -05:00
    expect(wallToUtc('2024-07-15 08:00:00', 0, 'America/New_York')).toBe('2024-07-15T12:00:00.000Z'); // EDT, -04:00
    expect(wallToUtc('2024-03-10 03:30:00', 0, 'America/New_York')).toBe('2024-03-10T07:30:00.000Z'); // just after the change
    expect(wallToUtc('2024-03-01 20:00:00', 0, 'Asia/Shanghai')).toBe('2024-03-01T12:00:00.000Z');
    const o = parseOptions(['--source', 'mysql://r@h/db', '--database-url', 'postgres://a/b', '--source-time-zone', 'Asia/Shanghai'], {});
    expect(o !== 'help' && o['source-time-zone']).toBe('Asia/Shanghai');
  });

  it('movements 3–6 with signed amounts → 3 in / 4 out, unsigned; deploy and mint unchanged', () => {
    const row = { id: '7', chain: 'ETH', protocol: 'ERC-20', tick: 'Pepe', address: '0xAb', tx_hash: null, operate: 'transfer',
      created_at: '2024-01-01 00:00:00', updated_at: '2024-01-01 00:00:00' };
    const ctx = { zoneMinutes: 0 };
    expect(mapMovement({ ...row, event: 3, amount: '-1.50' }, ctx)).toMatchObject({ event: 4, amount: '1.5', chain: 'eth', tick: 'pepe' });
    expect(mapMovement({ ...row, event: 6, amount: '2' }, ctx)).toMatchObject({ event: 3, amount: '2' });
    expect(mapMovement({ ...row, event: 5, amount: '-2' }, ctx)).toMatchObject({ event: 4, amount: '2' });
    expect(mapMovement({ ...row, event: 2, amount: '5' }, ctx)).toMatchObject({ event: 2, amount: '5' });
    expect(() => mapMovement({ ...row, event: 0, amount: '1' }, ctx)).toThrow(BadRowError);
    expect(() => mapMovement({ ...row, event: 0, amount: '1' }, ctx)).toThrow(/address_txs row 7: event 0/);
  });

  it('rows that cannot be mapped name their table and id', () => {
    expect(() => mapBalance({ id: '9', chain: 'eth', protocol: 'p', tick: 't', address: '0x1', balance: '-1', available: '0',
      updated_at: '2024-01-01 00:00:00' }, { zoneMinutes: 0 })).toThrow(/balances row 9: negative balance/);
    expect(() => mapTick({ id: '3', chain: 'eth', protocol: 'p', tick: 't', name: 't', limit_per_mint: '1', deploy_by: 'x',
      total_supply: '1', deploy_hash: 'h', deploy_time: 'yesterday', transfer_type: 0, decimals: 0, created_at: '2024-01-01 00:00:00',
      updated_at: '2024-01-01 00:00:00' }, { zoneMinutes: 0 })).toThrow(/inscriptions row 3: deploy_time/);
  });
});
