// GraphQL Code Generator config for clients of the gateway: `npx graphql-codegen --config
// examples/graphql-codegen/codegen.ts` writes TypeScript types of the schema and of the operations below.
// The custom scalars travel as JSON strings (exact decimals and block numbers beyond 2^53, ISO 8601 times),
// so each is mapped to `string`; strictScalars makes a scalar added to the schema without a mapping an error
// instead of `unknown`. test/clients/graphql-codegen.test.ts runs this config and type-checks its output.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: 'examples/graphql-codegen/*.graphql',
  generates: {
    'examples/graphql-codegen/generated/graphql.ts': {
      plugins: ['typescript-operations'],
      config: {
        strictScalars: true,
        scalars: {
          BigInt: 'string',
          DateTime: 'string',
          Decimal: 'string',
        },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
