import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { clientError } from '../errors.js';
import { costLimitPlugin } from './use-cost-limit.js';
import { resultBudgetPlugin } from './use-result-budget.js';

// What the GraphQL endpoint needs in front of the public internet:
// - limits on hostile documents, checked before anything runs: the parser stops at the token limit,
//   validation rejects deep nesting and alias fan-out (graphql-armor's plugins, configured here), the
//   estimated cost is checked with the request's variables just before execution (src/graphql/plugins/use-cost-limit.ts),
//   and introspection can be switched off (graphql-js's own rule, and no "Did you mean …" hints then);
// - a hard cap on the result while it is built (src/graphql/result-budget.ts);
// - every error reply in the one shape {errors: [{message, extensions: {code}}]}, including the few
//   that yoga would send without a body or without a code.

export interface GraphqlLimits {
  /** Selection nesting, fragments flattened; introspection included (GraphiQL's query is 15 deep). */
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  /** Estimated fields of the result, list selections × their (effective) length: src/graphql/plugins/use-cost-limit.ts. */
  maxCost: number;
  /** Off: `__schema` and `__type` are rejected (`__typename` stays allowed). */
  introspection: boolean;
}

/** The code every limit rejection carries, as for any other invalid document. */
const queryRejectedCode = 'GRAPHQL_VALIDATION_FAILED';

const rejected = (error: GraphQLError) =>
  new GraphQLError(error.message.replace(/^Syntax Error: /, ''), { extensions: { code: queryRejectedCode } });

// armor throws its own "Syntax Error: …" by default. Reported to the validation context instead, a
// rejection is an ordinary validation error (same code, same HTTP status as an unknown field); the token
// limit acts in the parser, where there is no context, so it is thrown with the code.
const report = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => {
    if (!context) throw rejected(error);
    context.reportError(rejected(error));
  }],
};

/** An error body in the one shape every GraphQL reply has: {errors: [{message, extensions: {code}}]}. */
const errorResponse = (fetchAPI: { Response: typeof Response }, status: number, message: string, code: string) =>
  new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code } }] }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });

// yoga quirks on hostile requests, mended so that every reply has the usual error body:
// - a POST of an unsupported content type gets an empty 415 (other verbs go on to yoga's 405);
// - malformed JSON in `variables`/`extensions` of a GET or form request escapes as a SyntaxError (a 500);
// - an operationName that is not a string reaches the Prometheus plugin's labels and fails there (a 500);
// - an Accept header that no result processor serves gets an empty 406;
// - a form-encoded, multipart or text/plain POST (what a cross-site form sends) was executed: 415, unparsed;
// - yoga's invalid-JSON body error carried the parser's error (extensions.originalError).
/** The content types a browser sends cross-site without a CORS preflight (besides none at all). */
const simpleContentType = /^\s*(?:application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(?:;|$)/i;

const useRequestErrorBodies: Plugin = {
  onRequestParse({ request, requestParser, setRequestParser, endResponse, fetchAPI }) {
    // a POST a browser may send from any page without a preflight (an HTML form, or fetch with a "simple"
    // content type) never runs: no cross-site request forgery against the endpoint
    if (request.method === 'POST' && simpleContentType.test(request.headers.get('content-type') ?? '')) {
      return endResponse(errorResponse(fetchAPI, 415, 'Unsupported media type: send application/json', 'BAD_REQUEST'));
    }
    if (!requestParser) {
      if (request.method === 'POST') {
        endResponse(errorResponse(fetchAPI, 415, 'Unsupported media type: send application/json', 'BAD_REQUEST'));
      }
      return;
    }
    setRequestParser(async (req) => {
      let params: Awaited<ReturnType<typeof requestParser>>;
      try {
        params = await requestParser(req);
      } catch (error) {
        // yoga's invalid-JSON body error carries the parser's own error in extensions.originalError: its
        // message only, without the internals
        if (error instanceof GraphQLError && error.extensions?.originalError !== undefined) {
          throw new GraphQLError(error.message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        }
        if (!(error instanceof SyntaxError)) throw error;
        throw new GraphQLError('Invalid JSON in a request parameter', { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
      }
      // plugins after this one (metrics labels, logs) take operationName for a string: make it one
      for (const p of Array.isArray(params) ? params : [params]) {
        const name: unknown = (p as { operationName?: unknown } | null)?.operationName;
        if (name != null && typeof name !== 'string') {
          throw new GraphQLError('operationName must be a string', { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        }
      }
      return params;
    });
  },
  onResultProcess({ resultProcessor, setResultProcessor }) {
    if (!resultProcessor) {
      const notAcceptable = (_: unknown, fetchAPI: { Response: typeof Response }) =>
        errorResponse(fetchAPI, 406, 'Not acceptable: accept application/json', 'BAD_REQUEST');
      setResultProcessor(notAcceptable, 'application/json');
    }
  },
};

// graphql-js reports variable values that do not coerce (and an unknown operation name) without a code;
// they are the client's input, so they get BAD_USER_INPUT like every other input error
const withCode = (error: GraphQLError) =>
  error.extensions?.code !== undefined ? error : clientError(error.message, {
    nodes: error.nodes, source: error.source, positions: error.positions, path: error.path,
    originalError: error.originalError, extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
  });
const useErrorCodes: Plugin = {
  onResultProcess({ result, setResult }) {
    if (!Array.isArray(result) && 'errors' in result && Array.isArray(result.errors)) {
      setResult({ ...result, errors: result.errors.map((e) => (e instanceof GraphQLError ? withCode(e) : e)) });
    }
  },
};

// graphql-js appends "Did you mean …?" with the names of fields, arguments, types and enum values close to
// a misspelt one: with introspection off that would leak the schema bit by bit. Stripped from every error
// of the reply (validation and variable coercion alike; graphql-armor's block-field-suggestions plugin
// only sees validation and misses the enum-value form "Did you mean the enum value …?").
const suggestion = /\s*Did you mean [^?]*\?/g;
const withoutSuggestion = (error: GraphQLError) => {
  if (!error.message.includes('Did you mean')) return error;
  return clientError(error.message.replace(suggestion, ''), {
    nodes: error.nodes, source: error.source, positions: error.positions, path: error.path,
    originalError: error.originalError, extensions: error.extensions,
  });
};
const useNoSuggestions: Plugin = {
  onResultProcess({ result, setResult }) {
    if (!Array.isArray(result) && 'errors' in result && Array.isArray(result.errors)) {
      setResult({ ...result, errors: result.errors.map((e) => (e instanceof GraphQLError ? withoutSuggestion(e) : e)) });
    }
  },
};

export function guardPlugins(limits: GraphqlLimits): Plugin[] {
  const plugins: Plugin[] = [
    useRequestErrorBodies,
    useErrorCodes,
    maxTokensPlugin({ n: limits.maxTokens, ...report }),
    // introspection counts too: GraphiQL's own query is 15 deep, and an uncounted `__schema` could nest
    // `fields { type { fields … } } }` as deep as the token limit allows
    maxDepthPlugin({ n: limits.maxDepth, ignoreIntrospection: false, flattenFragments: true, ...report }),
    maxAliasesPlugin({ n: limits.maxAliases, ...report }),
    costLimitPlugin(limits.maxCost),
    resultBudgetPlugin(),
  ];
  if (!limits.introspection) {
    plugins.push({ onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) }, useNoSuggestions);
  }
  return plugins;
}
