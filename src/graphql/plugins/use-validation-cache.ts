import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// The validation errors of each parsed document (none, for a valid one), kept as long as yoga's parser cache
// keeps the document. Every request of one server is validated by the same rules (graphql-js's and the limits of
// use-guards.ts and use-input-limits.ts, fixed when the server is built) against the one schema, so the document
// alone is the key: yoga's own validation cache keys it by the rules' names too, mapped and joined per request.

/** Register as the last of the server's plugins, where yoga's validation cache would run (src/graphql/yoga.ts). */
export function validationCachePlugin(): Plugin {
  const results = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  return {
    onValidate({ params: { schema, documentAST }, setResult }) {
      if (schema == null) return undefined;
      const known = results.get(documentAST);
      if (known) {
        setResult(known);
        return undefined;
      }
      return ({ result }) => {
        if (result != null) results.set(documentAST, result as readonly GraphQLError[]);
      };
    },
  };
}
