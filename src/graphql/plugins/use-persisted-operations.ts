import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { Kind, parse, print, validate, visit, type ASTNode, type DocumentNode, type FieldNode, type SelectionSetNode } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { createApqStore, type ApqStoreLimits } from '../apq-store.js';
import { schema } from '../schema.js';

// Persisted operations: a trusted manifest (PERSISTED_OPERATIONS_DIR, hashed every way a client may hash it)
// and Apollo's automatic persisted queries, whose documents are kept only once they parse and validate, in
// a store bounded per client (src/graphql/apq-store.ts), so no client can fill it with junk.

export interface PersistedOptions {
  /** The trusted operations by hash (loadManifest), or none. */
  manifest?: ReadonlyMap<string, string>;
  /** Only manifest operations run: no ad-hoc documents, no APQ registration. */
  only: boolean;
  /** The parser's token limit (GRAPHQL_MAX_TOKENS), for the registration's own parse (src/graphql/yoga.ts sets it). */
  maxTokens?: number;
  apqMaxEntries: number;
  apqMaxBytes: number;
  /** Per client (APQ_CLIENT_MAX_ENTRIES, APQ_CLIENT_MAX_BYTES), idle expiry (APQ_IDLE_TTL_S); defaults below. */
  apqClient?: Pick<ApqStoreLimits, 'clientMaxEntries' | 'clientMaxBytes' | 'idleTtlMs'>;
  /** Larger documents (UTF-8 bytes) are answered but not registered (APQ_MAX_DOCUMENT_BYTES). */
  apqMaxDocumentBytes?: number;
  /** Who registers: an API key's name or the client address (src/app.ts); default: the socket's address. */
  clientOf?: (req: IncomingMessage | undefined) => string;
}

export const apqClientDefaults = { clientMaxEntries: 100, clientMaxBytes: 256 * 1024, idleTtlMs: 3_600_000, maxDocumentBytes: 32 * 1024 };

/** Whether a document may be registered: it parses (within the token limit) and validates against the schema. */
function registrable(query: string, maxTokens: number): boolean {
  try {
    return validate(schema, parse(query, { maxTokens, noLocation: true })).length === 0;
  } catch {
    return false;
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hashPattern = /^[0-9a-f]{64}$/;

const typenameField: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

/** The document with `__typename` in each selection set below the root, as Apollo's cache rewrites it. */
function withTypenames(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet(node: SelectionSetNode, _key, parent: ASTNode | readonly ASTNode[] | undefined) {
      if (!parent || Array.isArray(parent) || (parent as ASTNode).kind === Kind.OPERATION_DEFINITION) return undefined;
      if (node.selections.some((s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'))) return undefined;
      return { ...node, selections: [...node.selections, typenameField] };
    },
  });
}

/** hash → document of every .graphql file in `dir` (a broken document stops the start, naming its file). */
export function loadManifest(dir: string): Map<string, string> {
  const manifest = new Map<string, string>();
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.graphql')).sort();
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    let document: DocumentNode;
    try {
      document = parse(text);
    } catch (error) {
      throw new Error(`persisted operation ${join(dir, file)}: ${(error as Error).message}`);
    }
    manifest.set(sha256(text), text);
    manifest.set(sha256(print(document)), text);
    manifest.set(sha256(print(withTypenames(document))), print(withTypenames(document)));
  }
  return manifest;
}

function apqHash(extensions: unknown): string | null {
  const pq = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

const badRequest = (message: string, code: string) => createGraphQLError(message, { extensions: { code, http: { status: 400 } } });

export function persistedOperationsPlugins(options: PersistedOptions): Plugin[] {
  const manifest = options.manifest ?? new Map<string, string>();
  const client = { ...apqClientDefaults, ...options.apqClient };
  const maxDocumentBytes = options.apqMaxDocumentBytes ?? apqClientDefaults.maxDocumentBytes;
  const apq = options.only ? null : createApqStore({ maxEntries: options.apqMaxEntries, maxBytes: options.apqMaxBytes, ...client });
  const clientOf = options.clientOf ?? ((req: IncomingMessage | undefined) => req?.socket.remoteAddress ?? 'unknown');
  // Registration (APQ's second step): the document arrives with its hash; a hash that is not the
  // document's is refused (else one client could bind another's hash to a document of its choosing).
  const register: Plugin = {
    onParams({ params, context }) {
      const hash = apqHash(params.extensions);
      const query = params.query;
      if (hash === null || typeof query !== 'string') return;
      if (!hashPattern.test(hash) || sha256(query) !== hash) {
        throw badRequest('provided sha does not match query', 'BAD_REQUEST');
      }
      if (!apq || manifest.has(hash) || apq.get(hash) !== undefined) return;
      // the size first (cheap), then parse and validate: a document that fails is answered with its errors, never kept
      if (Buffer.byteLength(query) > maxDocumentBytes || !registrable(query, options.maxTokens ?? 1_000)) return;
      apq.register(hash, query, clientOf((context as { req?: IncomingMessage }).req));
    },
  };
  return [
    register,
    usePersistedOperations({
      allowArbitraryOperations: !options.only,
      getPersistedOperation: (hash) => (hashPattern.test(hash) ? manifest.get(hash) ?? apq?.get(hash) ?? null : null),
      customErrors: {
        // 200 with the error: Apollo's link reads it from the body and retries with the document
        notFound: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 200 } } },
        keyNotFound: { message: 'Must provide query string or a persisted query hash.', extensions: { code: 'BAD_REQUEST', http: { status: 400 } } },
        persistedQueryOnly: {
          message: 'Only persisted operations are accepted (PERSISTED_OPERATIONS_ONLY)',
          extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } },
        },
      },
    }) as Plugin,
  ];
}
