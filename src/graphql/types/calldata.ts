import { CallDataError, decodeCallData, maxCallDataBytes, type InscriptionOperation } from '../../domain/calldata.js';
import { builder } from '../builder.js';
import { badInput } from '../paging.js';
import { TickRef } from './tick.js';

interface DecodedCallData extends InscriptionOperation {
  chain: string;
}

const CallDataOperationRef = builder.objectRef<DecodedCallData>('CallDataOperation');
CallDataOperationRef.implement({
  description: 'The inscription operation carried by transaction call data (`data:,{"p":…,"op":…,"tick":…}`).',
  fields: (t) => ({
    protocol: t.exposeString('protocol', { description: 'The `p` member, lower case.' }),
    operation: t.exposeString('operation', { description: 'The `op` member, lower case (deploy, mint, transfer, …).' }),
    tickName: t.exposeString('tick', { description: 'The `tick` member, lower case.' }),
    amount: t.exposeString('amount', { nullable: true, description: 'The `amt` member as written, if any.' }),
    payload: t.exposeString('payload', { description: 'The decoded JSON payload.' }),
    tick: t.field({
      type: TickRef,
      nullable: true,
      description: 'The tick on the given chain, if it is deployed there.',
      resolve: (d, _a, ctx) => ctx.loaders.tickByKey.load({ chain: d.chain, protocol: d.protocol, tick: d.tick }),
    }),
  }),
});

builder.queryFields((t) => ({
  decodeCallData: t.field({
    type: CallDataOperationRef,
    nullable: true,
    description:
      `Decodes hex call data (with or without 0x, at most ${maxCallDataBytes} bytes) holding a JSON inscription as a data ` +
      'URL (`data:,`, `data:application/json,`, `data:text/plain,`). Null when the data is hex but not an ' +
      'inscription; an error when it is not hex.',
    args: {
      chain: t.arg.string({ required: true, description: 'Chain whose tick the operation refers to.' }),
      data: t.arg.string({ required: true }),
    },
    resolve: (_root, args) => {
      try {
        const decoded = decodeCallData(args.data);
        return decoded && { ...decoded, chain: args.chain };
      } catch (error) {
        if (error instanceof CallDataError) throw badInput(error.message);
        throw error;
      }
    },
  }),
}));
