// What the method table does not say by itself, for schema/openrpc.json: a summary and description per
// method, its result schema (JSON Schema draft-07), the params that must not be empty, the errors it can
// answer with, and examples that run against the demo dataset (src/db/seed/demo.ts). Params (names,
// positions, types, defaults) come from the method table itself (src/rpc/openrpc.ts).

type Schema = Record<string, unknown>;

export interface ExampleSpec {
  name: string;
  summary?: string;
  params: unknown[];
}

export interface MethodDoc {
  summary: string;
  description?: string;
  /** Result schema (may reference #/components/schemas/*). */
  result: Schema;
  resultName?: string;
  /** Params that must be given and not empty. */
  required?: readonly string[];
  /** Per-method param descriptions (over the common ones). */
  params?: Record<string, string>;
  /** Whether the method answers -32603 Record not found. */
  notFound?: string;
  examples?: readonly ExampleSpec[];
}

// --- JSON Schema helpers ---------------------------------------------------------------------------

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const int = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra });
const count: Schema = int({ minimum: 0 });
const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });
/** An object with exactly these members (all required unless listed in `optional`). */
const object = (properties: Record<string, Schema>, optional: readonly string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  additionalProperties: false,
  ...extra,
});
const page = (listName: string, item: Schema, extra: Record<string, Schema> = {}): Schema =>
  object({ [listName]: array(item), total: count, limit: count, offset: count, ...extra });

// --- shared schemas (components.schemas) ----------------------------------------------------------

export const componentSchemas: Record<string, Schema> = {
  Decimal: str({
    description: 'Exact non-negative decimal in plain notation, trailing fractional zeros trimmed: "21000000", "0.5", "5".',
    pattern: '^(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$',
  }),
  MintedPercent: str({ description: 'minted ÷ total supply capped at 1, four decimals, truncated.', pattern: '^[01]\\.[0-9]{4}$' }),
  UnixTime: int({ minimum: 0, description: 'Unix seconds; 0 for a time that never happened.' }),
  IsoTime: str({
    description: 'ISO 8601 UTC, second precision; 0001-01-01T00:00:00Z for a time that never happened.',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$',
  }),
  GoTime: str({
    description: 'Go time.Time String() in UTC, second precision: "2024-01-16 10:18:46 +0000 UTC".',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \\+0000 UTC$',
  }),
  PercentChange: nullable(str({
    description: 'Percent change from the previous window, two decimals, signed ("25.00", "-50.00"); null when the previous window is empty.',
    pattern: '^-?[0-9]+\\.[0-9]{2}$',
  })),
  TransferType: int({ enum: [0, 1, 2], description: '0 not set, 1 by UTXO hash, 2 by balance.' }),
  TickListEntry: object({
    chain: str(), protocol: str(), tick: str(), deploy_by: str(), deploy_hash: str(), total_supply: ref('Decimal'),
    minted_percent: ref('MintedPercent'), limit_per_mint: ref('Decimal'), holders: count, transfer_type: ref('TransferType'),
    status: int({ enum: [1, 2], description: '1 minting, 2 fully minted.' }), minted: ref('Decimal'), tx_cnt: count,
    created_at: ref('UnixTime'),
  }, [], { description: 'Spec 2.1: a tick in a list.' }),
  TickList: page('inscriptions', ref('TickListEntry')),
  TickDetail: object({
    chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('UnixTime'), transfer_type: ref('TransferType'),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'), decimals: count,
  }, [], { description: 'Spec 2.2: tick detail.' }),
  TickDetailWithStats: object({
    chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('UnixTime'), transfer_type: ref('TransferType'),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'), decimals: count, minted: ref('Decimal'), holders: count,
    tx_cnt: count, progress: ref('Decimal'),
  }, [], { description: 'Spec 2.2 plus the live stats; progress = minted ÷ total supply capped at 1, trimmed.' }),
  TickBrief: object({
    id: count, chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('IsoTime'), transfer_type: ref('TransferType'),
    created_at: ref('IsoTime'), updated_at: ref('IsoTime'), decimals: count, holders: count, minted: ref('Decimal'),
    tx_cnt: count, progress: ref('Decimal'),
  }, [], { description: 'Spec 2.3: tick brief.' }),
  BalanceEntry: object({
    chain: str(), protocol: str(), tick: str(), address: str(), balance: ref('Decimal'), deploy_hash: str(),
    transfer_type: ref('TransferType'),
  }, [], { description: 'Spec 2.4: a balance of an address.' }),
  HolderEntry: object({
    chain: str(), protocol: str(), tick: str(), deploy_hash: str(), address: str(), balance: ref('Decimal'),
    total_supply: ref('Decimal'),
  }, [], { description: 'Spec 2.5: a holder of a tick.' }),
  AddressTransaction: object({
    chain: str(), protocol: str(), tick: str(), address: str(), tx_hash: str(), amount: ref('Decimal'),
    event: int({ enum: [1, 2, 3, 4], description: '1 deploy, 2 mint, 3 transfer in, 4 transfer out.' }), operate: str(),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'),
  }, [], { description: "Spec 2.6: one leg of a transaction in an address's movement log." }),
  Transaction: object({
    id: count, chain: str(), protocol: str(), block_height: count, position_in_block: count, block_time: ref('IsoTime'),
    tx_hash: str({ description: 'As stored for its chain (EVM 0x + 64 hex, btc 64 hex).' }), from: str(), to: str(), op: str(),
    tick: str(), amt: ref('Decimal'), gas: count, gas_price: count, status: int(), created_at: ref('IsoTime'),
    updated_at: ref('IsoTime'),
  }, [], { description: 'Spec 2.7: a raw transaction.' }),
  Chain: object({
    chain_id: count, chain: str(), outer_chain: str(), name: str(), logo: str(), network_id: count, ext: str(),
    block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('IsoTime'), timestamp: ref('IsoTime'),
  }, [], { description: 'Spec 2.8: an indexed chain with its latest indexed block.' }),
};

// --- common param descriptions --------------------------------------------------------------------

export const commonParamDescriptions: Record<string, string> = {
  limit: 'Page size; 0 gives an empty page with the real total; above the maximum it is clamped (the reply echoes the effective value).',
  offset: 'Page offset.',
  chain: 'Chain name (eth, avalanche, arbitrum, bsc, fantom, polygon, btc); case-insensitive; "" = no filter.',
  protocol: 'Protocol (asc-20, brc-20, …); case-insensitive; "" = no filter.',
  tick: 'Tick; case-insensitive; "" = no filter.',
  deploy_by: 'Deployer address; case-insensitive; "" = no filter.',
  deploy_hash: 'Deploy transaction hash; case-insensitive.',
  address: 'Address; case-insensitive.',
  key: 'Plain text matched as a case-insensitive substring of the tick ("" = no filter).',
  chains: 'Chain names; an empty list means every chain.',
  selectors: 'Ticks to describe, by chain and deploy hash.',
  call_data: 'Transaction input data in hex, with or without 0x.',
  tx_hash: 'Transaction hash (64 hex digits, with or without 0x; case-insensitive).',
  keyword: 'A tick name or its beginning, an address, or a transaction hash.',
};

const direction = '1 = ascending, anything else descending.';

// --- the demo records the examples use -----------------------------------------------------------

const crazydogDeployer = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59';
const scripted = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
const avasHash = '0x7ffc56b2bf20f4f3474c1fd503fc3f1fb9066c8b0665d6da11185cac892108a5';
const lobbyHash = '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601';
const satsHash = '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333';
const tomrayMint = '646174613a2c7b2270223a226173632d3230222c226f70223a226d696e74222c227469636b223a22746f6d726179222c22616d74223a2231227d';

const listOf = (item: string) => ({ type: 'array', items: ref(item) });
const notFoundTick = 'the tick does not exist';

// --- v2 methods -----------------------------------------------------------------------------------

export const methodDocs: Record<string, MethodDoc> = {
  inds_getTicks: {
    summary: 'List ticks (spec 4.1).',
    description: 'Exact-match filters; sort 0 = deploy order (record id), 1 = deploy time, 2 = mint progress, 3 = holders, ' +
      '4 = transaction count; the record id breaks ties. Also sent with 7 params (no sort_mode = descending).',
    result: ref('TickList'),
    params: { sort: '0 = default (record id), 1 = deploy time, 2 = mint progress, 3 = holders, 4 = transaction count.', sort_mode: direction },
    examples: [{ name: 'most-holders', summary: 'The two ticks with the most holders.', params: [2, 0, '', '', '', '', 3, 2] }],
  },
  inds_getInscriptions: {
    summary: 'Alias of inds_getTicks.',
    result: ref('TickList'),
    examples: [{ name: 'avalanche-by-holders', summary: 'The documented 7-param form (no sort_mode).', params: [2, 0, 'avalanche', '', '', '', 3] }],
  },
  inds_getTransactionByAddress: {
    summary: "An address's movement log (spec 4.2), newest first.",
    description: 'One row per address per transaction leg. Sent with 7 params (event at index 6) or 8 (a key at index 6, event at index 7).',
    result: page('transactions', ref('AddressTransaction')),
    required: ['address'],
    params: { event: '0 = all, 1 = deploy, 2 = mint, 3 = transfer (in and out).' },
    examples: [{ name: 'crazydog-deployer', params: [2, 0, crazydogDeployer, '', '', '', 0] }],
  },
  inds_getBalancesByAddress: {
    summary: 'Positive balances of an address (spec 4.3), by balance; the tick breaks ties.',
    result: page('inscriptions', ref('BalanceEntry')),
    required: ['address'],
    params: { sort: direction },
    examples: [{ name: 'scripted-address', params: [5, 0, scripted, '', '', '', '', 2] }],
  },
  inds_getBalanceByAddress: {
    summary: 'Alias of inds_getBalancesByAddress (its name before a rename).',
    result: page('inscriptions', ref('BalanceEntry')),
    required: ['address'],
    params: { sort: direction },
  },
  inds_getHoldersByTick: {
    summary: 'Holders of a tick (spec 4.4), by balance; the address breaks ties.',
    result: page('holders', ref('HolderEntry')),
    notFound: notFoundTick,
    params: { sort: direction },
    examples: [{ name: 'tomray', params: [3, 0, 'avalanche', 'asc-20', 'tomray', 2] }],
  },
  index_getInscriptionByTick: {
    summary: 'Tick detail by (chain, protocol, tick) (spec 4.5).',
    result: ref('TickDetail'),
    notFound: notFoundTick,
    examples: [{ name: 'crazydog', params: ['avalanche', 'asc-20', 'crazydog'] }],
  },
  inds_getTransactions: {
    summary: 'Raw transactions (spec 4.6) in chain order (block height, position).',
    description: 'The address matches the sender or the recipient; total is the real count; code and msg are 0.',
    result: page('data', ref('Transaction'), { code: int({ const: 0 }), msg: int({ const: 0 }) }),
    params: { sortmode: direction },
    examples: [{ name: 'avalanche-newest', params: [2, 0, '', 'avalanche', '', '', 2] }],
  },
  inds_getTickBriefs: {
    summary: 'Tick briefs by (chain, deploy hash) (spec 4.7), in selector order; unknown selectors are left out.',
    result: object({ inscriptions: array(ref('TickBrief')) }),
    examples: [{ name: 'avas', params: [[{ chain: 'avalanche', deploy_hash: avasHash }]] }],
  },
  inds_getAllChains: {
    summary: 'Indexed chains with their latest indexed block (spec 4.8), in display order.',
    result: listOf('Chain'),
    examples: [{ name: 'all', params: [[]] }],
  },
  inds_getAllChain: {
    summary: 'Alias of inds_getAllChains (its name before a rename).',
    result: listOf('Chain'),
  },

  inds_getTick: {
    summary: 'Tick detail with its live stats, by any of chain, protocol, tick and deploy hash.',
    description: 'Empty params are not used; the ones given must pick exactly one tick: at least a tick or a deploy hash, ' +
      'and -32602 if several ticks match (add the chain or the protocol). -32603 if none does.',
    result: ref('TickDetailWithStats'),
    notFound: 'no tick matches',
    params: { chain: 'Chain name; "" = any.', protocol: 'Protocol; "" = any.', tick: 'Tick; "" = any.', deploy_hash: 'Deploy transaction hash; "" = any.' },
    examples: [
      { name: 'by-name', params: ['avalanche', 'asc-20', 'lobby', ''] },
      { name: 'by-deploy-hash', summary: 'The deploy hash alone (btc, stored without 0x).', params: ['', '', '', satsHash] },
    ],
  },
  inds_getLastBlockNumberIndexed: {
    summary: 'Latest indexed block per chain.',
    description: 'An empty list means every chain (display order). A chain that has indexed nothing yet answers block_number ' +
      '"0", the zero time and timestamp 0. An unknown chain is -32603 naming it (data.chains).',
    result: array(object({ chain: str(), block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('GoTime'), timestamp: ref('UnixTime') })),
    notFound: 'a chain does not exist',
    examples: [{ name: 'avalanche', params: [['avalanche']] }],
  },
  inds_getTickByCallData: {
    summary: 'Decode inscription call data into its operation, protocol and tick (and the deploy hash if deployed).',
    description: 'Accepts hex of data:,{json}, data:application/json,{json} and data:text/plain,{json} with string p, op and ' +
      'tick, with or without 0x, at most 1024 characters as a param. Not hex: -32602; hex but no inscription: -32603. ' +
      'deploy_hash is "" when the tick is not deployed on the chain.',
    result: object({ operate: str(), protocol: str(), tick: str(), deploy_hash: str() }),
    required: ['call_data'],
    notFound: 'the call data holds no inscription',
    params: { chain: 'Chain whose tick the operation refers to (for deploy_hash).' },
    examples: [{ name: 'tomray-mint', params: ['avalanche', `0x${tomrayMint}`] }],
  },
  inds_getInscriptionTxOperate: {
    summary: 'Alias of inds_getTickByCallData.',
    result: object({ operate: str(), protocol: str(), tick: str(), deploy_hash: str() }),
    required: ['call_data'],
    notFound: 'the call data holds no inscription',
    examples: [{ name: 'tomray-mint-without-0x', summary: 'The documented form, without 0x.', params: ['avalanche', tomrayMint] }],
  },
  inds_getTransactionByHash: {
    summary: 'A transaction by hash with the tick it touched, its address movements and the decoded operation.',
    description: 'is_inscription is true for an inscription operation; inscriptions (the tick detail with stats) is present ' +
      'when the transaction touched an indexed tick; address lists every address leg (spec 2.6, possibly empty); data is ' +
      'the operation {p, op, tick, amt}. Hashes are hex strings as stored for the chain.',
    result: object({
      is_inscription: { type: 'boolean' },
      transaction: ref('Transaction'),
      inscriptions: ref('TickDetailWithStats'),
      address: array(ref('AddressTransaction')),
      data: object({ p: str(), op: str(), tick: str(), amt: ref('Decimal') }),
    }, ['inscriptions']),
    required: ['chain', 'tx_hash'],
    notFound: 'no such transaction on the chain',
    examples: [{ name: 'lobby-deploy', params: ['avalanche', lobbyHash] }],
  },
  inds_getAddressBalance: {
    summary: "An address's balance of one tick.",
    description: 'Key order as the existing service: tick, balance, transfer_type, [utxos], deploy_hash, available. An address ' +
      'that never held the tick has balance and available "0". utxos (unspent transfer outputs, newest first, at most 1000) ' +
      'is present only for ticks transferred by UTXO hash (transfer_type 1) that have some.',
    result: object({
      tick: str(),
      balance: ref('Decimal'),
      transfer_type: ref('TransferType'),
      utxos: array(object({ tick: str(), amount: ref('Decimal'), root_hash: str() }), { minItems: 1 }),
      deploy_hash: str(),
      available: ref('Decimal'),
    }, ['utxos']),
    required: ['address', 'chain', 'protocol', 'tick'],
    notFound: notFoundTick,
    examples: [{ name: 'scripted-tomray', params: [scripted, 'avalanche', 'asc-20', 'tomray'] }],
  },
  inds_search: {
    summary: 'Search by keyword: ticks by name prefix, an address, or a transaction hash.',
    description: 'Decided by the shape of the keyword: 64 hex digits (optionally after 0x) = TxHash (the transactions with that ' +
      'hash, spec 2.7); 0x + 40 hex or a btc address = Address (positive balances summed per chain, largest first); anything ' +
      'else = Inscription (ticks whose name starts with the keyword, the exact name first, then by holders; at most 100, ' +
      'total counts all). Nothing found is an empty list, not an error.',
    result: {
      oneOf: [
        object({ type: { const: 'Inscription' }, data: ref('TickList') }),
        object({ type: { const: 'Address' }, data: array(object({ chain: str(), address: str(), balance: ref('Decimal') })) }),
        object({ type: { const: 'TxHash' }, data: array(ref('Transaction')) }),
      ],
    },
    required: ['keyword'],
    params: { chain: 'Only this chain; "" = every chain.' },
    examples: [
      { name: 'address', params: [scripted, ''] },
      { name: 'tick-prefix', params: ['sat', ''] },
      { name: 'tx-hash', params: [lobbyHash, 'avalanche'] },
    ],
  },
  inds_chainInfo: {
    summary: 'A chain (spec 2.8) with its totals.',
    description: 'tick_count = ticks deployed; address_count = distinct addresses holding a positive balance; deploy/mint/' +
      'transfer_count = transactions by operation; transaction_count = all indexed transactions of the chain. Computed from ' +
      'the read model on each call. An unknown chain is -32603.',
    result: object({
      chain_id: count, chain: str(), outer_chain: str(), name: str(), logo: str(), network_id: count, ext: str(),
      block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('IsoTime'), timestamp: ref('IsoTime'), tick_count: count,
      address_count: count, deploy_count: count, mint_count: count, transfer_count: count, transaction_count: count,
    }),
    required: ['chain'],
    notFound: 'the chain does not exist',
    examples: [{ name: 'avalanche', params: ['avalanche'] }],
  },
  inds_chainStat: {
    summary: "The last 24 h of each chain's indexed activity compared with the 24 h before.",
    description: "Windows end at window_end, the block time of the chain's newest indexed transaction (not the wall clock): " +
      'current = (end - 24 h, end], previous = (end - 48 h, end - 24 h]. address = distinct senders and recipients, tick = ' +
      'distinct ticks touched, transaction = transactions; *_change = percent change (string, two decimals, null when the ' +
      'previous window is empty). An empty list means every chain; an unknown chain is -32603 naming it.',
    result: array(object({
      chain_id: count, chain: str(), name: str(), logo: str(), window_end: ref('IsoTime'),
      address_24h: count, address_24h_previous: count, address_24h_change: ref('PercentChange'),
      tick_24h: count, tick_24h_previous: count, tick_24h_change: ref('PercentChange'),
      transaction_24h: count, transaction_24h_previous: count, transaction_24h_change: ref('PercentChange'),
    })),
    notFound: 'a chain does not exist',
    examples: [{ name: 'avalanche-and-btc', params: [['avalanche', 'btc']] }],
  },
  inds_chainBlockStat: {
    summary: 'Activity of the newest 10 blocks of a chain that hold indexed transactions, newest first.',
    result: array(object({
      block_height: count, block_time: ref('IsoTime'), tick_count: count, transaction_count: count, address_count: count,
    })),
    required: ['chain'],
    notFound: 'the chain does not exist',
    examples: [{ name: 'avalanche', params: ['avalanche'] }],
  },
  'rpc.discover': {
    summary: 'This OpenRPC document.',
    resultName: 'OpenRPC Schema',
    result: { $ref: 'https://raw.githubusercontent.com/open-rpc/meta-schema/master/schema.json' },
  },
};

/** Examples of the v1 methods (their docs are their v2 twins'). */
export const v1Examples: Record<string, readonly ExampleSpec[]> = {
  'inscription.All': [{ name: 'most-holders', params: [2, 0, '', '', '', '', 3] }],
  'inscription.Tick': [{ name: 'crazydog', params: ['avalanche', 'asc-20', 'crazydog'] }],
  'address.Transactions': [{ name: 'crazydog-deployer', params: [2, 0, crazydogDeployer, '', '', '', '', 0] }],
  'address.Balances': [{ name: 'scripted-address', params: [5, 0, scripted, '', '', '', ''] }],
  'address.Balance': [{ name: 'scripted-tomray', params: [scripted, 'avalanche', 'asc-20', 'tomray'] }],
  'tick.Holders': [{ name: 'tomray', params: [3, 0, 'avalanche', 'asc-20', 'tomray'] }],
  'block.LastNumber': [{ name: 'avalanche', params: [['avalanche']] }],
  'tool.InscriptionTxOperate': [{ name: 'tomray-mint', params: ['avalanche', tomrayMint] }],
  'transaction.Info': [{ name: 'lobby-deploy', params: ['avalanche', lobbyHash] }],
  'tick.GetBriefs': [{ name: 'avas', params: [[{ chain: 'avalanche', deploy_hash: avasHash }]] }],
};
