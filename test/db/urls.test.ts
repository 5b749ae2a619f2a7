import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { expandHosts, expandUrlList, hostLabel } from '../../src/domain/database-urls.js';

// Database URLs as operators write them: libpq multi-host URLs (which WHATWG URL parsing rejects) and
// comma-separated lists, each host becoming a source of its own; labels never carry credentials.

describe('database URLs', () => {
  it('a multi-host DATABASE_URL is accepted and expanded, one URL per host, credentials and query kept', () => {
    const url = 'postgres://reader:s3cret@db1:5432,db2:5433/inscriptions?sslmode=disable';
    expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    expect(expandHosts(url)).toEqual([
      'postgres://reader:s3cret@db1:5432/inscriptions?sslmode=disable',
      'postgres://reader:s3cret@db2:5433/inscriptions?sslmode=disable',
    ]);
    expect(expandHosts(url).map(hostLabel)).toEqual(['db1:5432', 'db2:5433']);
  });

  it('DATABASE_READ_URLS: a comma-separated list of URLs, each possibly multi-host', () => {
    const list = 'postgres://u@r1/db, postgresql://u@r2:6432,r3:6433/db';
    expect(loadConfig({ DATABASE_URL: 'postgres://u@p/db', DATABASE_READ_URLS: list }).DATABASE_READ_URLS).toBe(list);
    expect(expandUrlList(list).map(hostLabel)).toEqual(['r1:5432', 'r2:6432', 'r3:6433']);
  });

  it('bad values stop the start with a message naming the variable', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x/db' })).toThrow(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h1,,h2/db' })).toThrow(/DATABASE_URL: has an empty host/);
    expect(() => loadConfig({ DATABASE_READ_URLS: 'postgres://u@r1/db' })).toThrow(/DATABASE_READ_URLS: needs DATABASE_URL/);
    expect(() => loadConfig({ DB_POOLER: 'pgpool' })).toThrow(/DB_POOLER/);
  });

  it('DATABASE_READ_NAMES: one name per replica host, in their order, all different', () => {
    const hosts = { DATABASE_URL: 'postgres://u@p,r0/db', DATABASE_READ_URLS: 'postgres://u@pooler:6432/r1,postgres://u@pooler:6432/r2' };
    expect(loadConfig({ ...hosts, DATABASE_READ_NAMES: 'eu-0,r1,r.2' }).DATABASE_READ_NAMES).toEqual(['eu-0', 'r1', 'r.2']);
    expect(loadConfig(hosts).DATABASE_READ_NAMES).toBeUndefined();
    expect(() => loadConfig({ ...hosts, DATABASE_READ_NAMES: 'a,b' })).toThrow(/DATABASE_READ_NAMES: 2 names for 3 replica hosts/);
    expect(() => loadConfig({ ...hosts, DATABASE_READ_NAMES: 'a,b,a' })).toThrow(/DATABASE_READ_NAMES: names must differ/);
    expect(() => loadConfig({ ...hosts, DATABASE_READ_NAMES: 'a,b c,d' })).toThrow(/DATABASE_READ_NAMES: must be a comma-separated list/);
  });

  it('defaults: lag budget 5 s, no pooler, unsafe sessions refused', () => {
    const config = loadConfig({});
    expect([config.MAX_REPLICA_LAG_MS, config.DB_POOLER, config.DB_ALLOW_UNSAFE_SESSION]).toEqual([5_000, 'none', false]);
  });
});
