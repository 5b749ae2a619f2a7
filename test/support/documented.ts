import { readFileSync } from 'node:fs';
import { Fixture, unix } from './fixtures.js';

// The records the v2 interface's documented examples show, shared by the contract tests of both interface
// versions (test/rpc/contract.test.ts, test/rpc/v1.test.ts) and the lookups' records (test/support/records.ts).

export const crazydogDeployer = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59';
export const crazydogHash = '0x2f88df8669337ec739d8414df0f3ef32bf166cb73233c965e805b7fa54eef1f2';
export const lobbyDeployer = '0x7a7b6Be7f5Ac593bcb262b52ae5a731aa1690ad4';
export const lobbyHash = '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601';
export const tomrayHash = '0xed8e1bedf44d582849b31925e17d4379c2c42845c3a472f16a0b70e4bcdfeb52';

/** crazydog and its one mint, with the transfer type each group of examples shows. */
export function documentedFixture(crazydogTransferType: number): Fixture {
  const f = new Fixture();
  const crazydog = f.tick({
    chain: 'avalanche', protocol: 'asc-20', tick: 'crazydog', name: 'crazydog', limit_per_mint: '21000000',
    deploy_by: crazydogDeployer, total_supply: '21000000', deploy_hash: crazydogHash, deploy_time: unix(1704152964),
    transfer_type: crazydogTransferType, decimals: 0, created_at: unix(1704524337), updated_at: unix(1704524337),
  });
  f.mint(crazydog, crazydogDeployer, '21000000', '0xe89e1c445431a695fcc2797cde214a731c65765468e6095672fb0cbe8f8a6fdd');
  // movement times as documented (created_at = updated_at = 1704524337)
  const movement = f.data.movements.at(-1)!;
  movement.created_at = movement.updated_at = unix(1704524337);
  return f;
}

/** ggang, the tick list example sorted by holders ascending. */
export function addGgang(f: Fixture): void {
  f.tick({
    chain: 'polygon', protocol: 'brc-20', tick: 'ggang', name: 'ggang', limit_per_mint: '500',
    deploy_by: '0x53B4daF4a49bB1a91D8Adfca584529f69e5211F5', total_supply: '5000',
    deploy_hash: '0x0a2672352f59b27b29a2cbbd043930441daed984af2a73cd94e2ee2d77e9041c',
    deploy_time: unix(1704532932), created_at: unix(1704532932), updated_at: unix(1704532932),
    stats: { holders: 2, minted: '2500', tx_cnt: 6 },
  });
}

/** One documented request/response pair of the v2 interface (test/fixtures/v2-documented.json). */
export interface Documented { method: string; params: unknown[]; result: any; note?: string }

export const documentedExchanges: Documented[] = JSON.parse(readFileSync(new URL('../fixtures/v2-documented.json', import.meta.url), 'utf8'));

/** The documented exchange of `method`. */
export function doc(method: string): Documented {
  const found = documentedExchanges.find((e) => e.method === method);
  if (!found) throw new Error(`no documented exchange for ${method}`);
  return found;
}

/** One documented exchange of either interface version (test/fixtures/documented-all.json). */
export interface DocumentedExchange { method: string; params: unknown[]; response_result: any; endpoint: string; notes: string }

/** The v1 and v2 examples of the interface's docs, as written there. */
export const allDocumentedExchanges: DocumentedExchange[] = JSON.parse(readFileSync(new URL('../fixtures/documented-all.json', import.meta.url), 'utf8'));
