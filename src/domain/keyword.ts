// What a search keyword looks like (inds_search): a transaction hash, an address, or else the name (or
// the beginning of the name) of a tick. Decided from the keyword's shape alone, before any look-up.

export type KeywordKind = 'TX_HASH' | 'ADDRESS' | 'TICK';

const txHash = /^(0x)?[0-9a-fA-F]{64}$/;
const evmAddress = /^0x[0-9a-fA-F]{40}$/;
// bech32/bech32m (segwit v0/v1 on main, test and regtest networks) and base58 (P2PKH, P2SH)
const btcBech32 = /^(bc1|tb1|bcrt1)[02-9ac-hj-np-z]{6,87}$/i;
const btcBase58 = /^[123mn][1-9A-HJ-NP-Za-km-z]{25,34}$/;

export function classifyKeyword(keyword: string): KeywordKind {
  if (txHash.test(keyword)) return 'TX_HASH';
  if (evmAddress.test(keyword) || btcBech32.test(keyword) || btcBase58.test(keyword)) return 'ADDRESS';
  return 'TICK';
}

/**
 * The stored spellings a transaction hash may have: EVM hashes are stored with 0x, btc hashes without,
 * so a hash given either way finds the record.
 */
export function hashCandidates(hash: string): string[] {
  const bare = hash.startsWith('0x') || hash.startsWith('0X') ? hash.slice(2) : hash;
  return [bare.toLowerCase(), `0x${bare.toLowerCase()}`];
}

/** A 32-byte transaction hash in hex, with or without 0x. */
export const isTxHash = (value: string): boolean => txHash.test(value);
