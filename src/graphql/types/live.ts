import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { enterEventScope } from '../../request/scope.js';
import { isDropped, type LiveBlock, type LiveMovement, type Topic } from '../../live/hub.js';
import { builder } from '../builder.js';
import { onSocketClose } from '../socket-close.js';
import { renewContext, type Context } from '../context.js';
import { ChainRef } from './chain.js';
import { AddressTransactionRef } from './movement.js';
import { TickRef } from './tick.js';

// Live updates (GraphQL subscriptions over SSE): src/live carries the events, this file the schema. The
// payload rows come from the hub (loaded once per notification); nested fields load through the loaders,
// which are renewed before each event, so a tick's stats are the ones after the event.

/** How long a dropped (slow) client has to take its last event before its connection is cut. */
const dropGraceMs = 5_000;

function subscribe<T>(ctx: Context, topic: Topic): AsyncIterable<T> {
  if (!ctx.live) throw new GraphQLError('Subscriptions are not available here', { extensions: { code: 'BAD_REQUEST' } });
  const { req, res } = ctx as Context & { req?: IncomingMessage; res?: ServerResponse };
  const subscription = ctx.live.subscribe<T>(topic, {
    beforeEvent: () => renewContext(ctx),
    // a client that does not read gets its error event if it ever reads again, and is cut after a grace
    dropped: () => setTimeout(() => {
      if (res && !res.writableEnded) req?.socket.destroy();
    }, dropGraceMs).unref(),
  });
  // the stream ends with its connection: a response pipelined behind another on a kept-alive connection
  // has no socket of its own and never hears the client leave (Node emits no 'close' for it)
  subscription.onEnd(onSocketClose(req?.socket, () => subscription.end()));
  return subscription as AsyncIterable<T>;
}

/** The event itself, or the drop error as the stream's last event. */
function event<T>(value: T): T {
  if (isDropped(value)) throw value.dropped;
  enterEventScope();
  return value;
}

const LiveBlockRef = builder.objectRef<LiveBlock>('LiveBlock');
LiveBlockRef.implement({
  description: 'A block the indexer has just committed as the newest of its chain.',
  fields: (t) => ({
    chainName: t.exposeString('chain', { description: 'Chain name.' }),
    chain: t.field({ type: ChainRef, resolve: (b, _a, ctx) => ctx.loaders.chainByName.load(b.chain).then((c) => c!) }),
    height: t.field({ type: 'BigInt', resolve: (b) => b.block_height }),
    time: t.field({ type: 'DateTime', description: 'Block time.', resolve: (b) => b.block_time }),
    transactionCount: t.exposeInt('transaction_count', { description: 'Indexed transactions of the block.' }),
    inscriptionCount: t.exposeInt('inscription_count', { description: 'Inscription transactions (with a tick) of the block.' }),
    tickCount: t.exposeInt('tick_count', { description: 'Distinct ticks touched in the block.' }),
    addressCount: t.exposeInt('address_count', { description: 'Distinct senders and recipients in the block.' }),
  }),
});

const TickActivityRef = builder.objectRef<LiveMovement>('TickActivity');
TickActivityRef.implement({
  description: 'A mint or a transfer of a tick, with the tick as it is after it.',
  fields: (t) => ({
    movement: t.field({
      type: AddressTransactionRef,
      description: 'The movement: a mint, or the receiving leg of a transfer.',
      resolve: (m) => m,
    }),
    tick: t.field({
      type: TickRef,
      description: 'The tick with its updated stats.',
      resolve: (m, _a, ctx) => ctx.loaders.tickById.load(m.tick_id).then((r) => r!),
    }),
  }),
});

builder.subscriptionType({ description: 'Live updates, over Server-Sent Events (accept: text/event-stream).' });

builder.subscriptionFields((t) => ({
  blocks: t.field({
    type: LiveBlockRef,
    description: 'Each newly indexed block of the given chains (all chains when omitted), once it is committed.',
    args: { chains: t.arg.stringList({ description: 'Chain names; all chains when omitted.' }) },
    subscribe: (_root, args, ctx) =>
      subscribe<LiveBlock>(ctx, { kind: 'blocks', chains: args.chains ? new Set(args.chains.map((c) => c.toLowerCase())) : null }),
    resolve: (b) => event(b),
  }),
  addressActivity: t.field({
    type: AddressTransactionRef,
    description: 'Each new movement of an address (the entries `addressTransactions` lists), optionally on one chain.',
    args: { address: t.arg.string({ required: true }), chain: t.arg.string() },
    subscribe: (_root, args, ctx) =>
      subscribe<LiveMovement>(ctx, { kind: 'address', addressKey: args.address.toLowerCase(), chain: args.chain?.toLowerCase() ?? null }),
    resolve: (m) => event(m),
  }),
  tickActivity: t.field({
    type: TickActivityRef,
    description: 'Each new mint and transfer of a tick, with its updated stats.',
    args: { chain: t.arg.string({ required: true }), protocol: t.arg.string({ required: true }), tick: t.arg.string({ required: true }) },
    subscribe: (_root, args, ctx) => subscribe<LiveMovement>(ctx, {
      kind: 'tick', chain: args.chain.toLowerCase(), protocol: args.protocol.toLowerCase(), tick: args.tick.toLowerCase(),
    }),
    resolve: (m) => event(m),
  }),
}));
