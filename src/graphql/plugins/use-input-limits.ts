import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// Bounds on what a client sends as input, for every operation (queries and subscriptions alike, over
// POST, GET and SSE): the variables' JSON size, each string's length and each list's length, in the
// variables and in the document's literals. The body limit bounds one request, not what a subscription
// keeps for its lifetime: without these, a 1 MB `$address` or a 90,000-name `chains:` list is held by
// every open stream that sends it. Past a bound: BAD_USER_INPUT (variables) or
// GRAPHQL_VALIDATION_FAILED (literals, like every other document limit), HTTP 400, nothing runs.

export interface InputLimits {
  /** GRAPHQL_MAX_VARIABLES_BYTES: the variables as JSON. */
  maxVariablesBytes: number;
  /** GRAPHQL_MAX_STRING_LENGTH: characters of one string value. */
  maxStringLength: number;
  /** GRAPHQL_MAX_LIST_LENGTH: items of one list value. */
  maxListLength: number;
}

const badInput = (message: string) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });

/** The first value of `variables` over a length bound, as a message; null when every value is within. */
export function oversizedValue(variables: unknown, limits: InputLimits): string | null {
  const bound = withinLengths(variables, limits);
  return bound !== null && Number.isFinite(bound) ? null : describeOversized(variables, limits);
}

/** Variables nested deeper than this are sized by JSON.stringify (see withinLengths). */
const maxPlainDepth = 64;

/**
 * One walk without allocations but its stack: null when a string or list is over its bound, else an upper bound
 * of the variables' JSON size in UTF-8 bytes (a character takes at most 6: `\u001f`), so that the exact size is
 * measured only when it might be over its own bound.
 */
function withinLengths(variables: unknown, limits: InputLimits): number | null {
  const stack: unknown[] = [variables];
  const depths: number[] = [0];
  let bytes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    const depth = depths.pop()!;
    // deep nesting is measured by JSON.stringify itself (which refuses what is nested deeper than its stack)
    if (depth > maxPlainDepth) return Number.POSITIVE_INFINITY;
    if (typeof value === 'string') {
      if (value.length > limits.maxStringLength) return null;
      bytes += 6 * value.length + 2;
    } else if (Array.isArray(value)) {
      if (value.length > limits.maxListLength) return null;
      bytes += value.length + 2;
      for (let i = 0; i < value.length; i++) {
        stack.push(value[i]);
        depths.push(depth + 1);
      }
    } else if (typeof value === 'object' && value !== null) {
      bytes += 2;
      for (const key in value) {
        bytes += 6 * key.length + 4;
        stack.push((value as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    } else {
      bytes += 24; // a number, boolean or null: never longer in JSON
    }
  }
  return bytes;
}

/** The message naming the first value over its bound, with its path (walked again only when there is one). */
function describeOversized(variables: unknown, limits: InputLimits): string | null {
  const stack: { value: unknown; path: string }[] = [{ value: variables, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > limits.maxStringLength) {
        return `Variable $${path} is a string of ${value.length} characters: at most ${limits.maxStringLength} (GRAPHQL_MAX_STRING_LENGTH)`;
      }
    } else if (Array.isArray(value)) {
      if (value.length > limits.maxListLength) {
        return `Variable $${path} is a list of ${value.length} items: at most ${limits.maxListLength} (GRAPHQL_MAX_LIST_LENGTH)`;
      }
      value.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]` }));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) stack.push({ value: item, path: path ? `${path}.${key}` : key });
    }
  }
  return null;
}

/** The variables' size as JSON in UTF-8 bytes; infinite when they cannot be written as JSON at all. */
function jsonBytes(variables: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(variables));
  } catch {
    return Number.POSITIVE_INFINITY; // nested deeper than the stack: no legitimate variables are
  }
}

/** The same bounds on the document's literals (a string literal is one token, whatever its length). */
export function literalLimitsRule(limits: InputLimits) {
  return (context: ValidationContext): ASTVisitor => ({
    StringValue(node) {
      if (node.value.length > limits.maxStringLength) {
        context.reportError(new GraphQLError(
          `A string argument of ${node.value.length} characters: at most ${limits.maxStringLength} (GRAPHQL_MAX_STRING_LENGTH)`,
          { nodes: node, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ));
      }
    },
    ListValue(node) {
      if (node.values.length > limits.maxListLength) {
        context.reportError(new GraphQLError(
          `A list argument of ${node.values.length} items: at most ${limits.maxListLength} (GRAPHQL_MAX_LIST_LENGTH)`,
          { nodes: node, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ));
      }
    },
  });
}

export function inputLimitsPlugin(limits: InputLimits): Plugin {
  const rule = literalLimitsRule(limits);
  return {
    onParams({ params }) {
      const variables = params.variables;
      if (variables == null) return;
      const bound = withinLengths(variables, limits);
      // the exact size only when the bound might be over the limit (and before the lengths, as it always was)
      const bytes = bound === null || bound > limits.maxVariablesBytes ? jsonBytes(variables) : bound;
      if (bytes > limits.maxVariablesBytes) {
        throw badInput(`Variables of ${Number.isFinite(bytes) ? bytes : 'too many'} bytes: at most ${limits.maxVariablesBytes} (GRAPHQL_MAX_VARIABLES_BYTES)`);
      }
      // (a walk cut short by deep nesting checked no length: the full walk does)
      const oversized = bound === null || !Number.isFinite(bound) ? describeOversized(variables, limits) : null;
      if (oversized) throw badInput(oversized);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(rule);
    },
  };
}
