import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const decimalPattern = /^\d+(\.\d+)?$/;
const integerPattern = /^\d+$/;

/**
 * Plain decimal notation of a PostgreSQL numeric string: trailing fractional zeros and a trailing dot
 * removed (`21000000.000` → `21000000`, `0.500` → `0.5`). Pure string work: amounts exceed 2^64 and
 * must never pass through a JS number.
 */
function trimDecimal(value: string): string {
  if (!value.includes('.')) return value;
  const trimmed = value.replace(/0+$/, '');
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** ISO 8601 UTC with second precision and a Z suffix: `2024-02-27T15:12:23Z`. */
export function isoSeconds(date: Date): string {
  const year = date.getUTCFullYear();
  // four-digit years from the UTC fields (toISOString and a slice cost ~3x as much, every time field of every
  // row); other years (±YYYYYY) and an invalid date (RangeError) as toISOString has them
  if (!(year >= 1000 && year <= 9999)) return `${date.toISOString().slice(0, -5)}Z`;
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:` +
    `${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}Z`;
}

function parseString(name: string, pattern: RegExp, value: unknown): string {
  if (typeof value !== 'string' || !pattern.test(value) || value.length > 100) {
    throw new GraphQLError(`${name} must be a non-negative decimal string`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return value;
}

export const DecimalScalar = new GraphQLScalarType<string, string>({
  name: 'Decimal',
  description: 'An exact non-negative decimal number as a string in plain notation (e.g. "21000000", "0.5"). Never a float.',
  serialize: (value) => trimDecimal(String(value)),
  parseValue: (value) => parseString('Decimal', decimalPattern, value),
  parseLiteral: (ast) => parseString('Decimal', decimalPattern, ast.kind === Kind.STRING ? ast.value : undefined),
});

export const BigIntScalar = new GraphQLScalarType<string, string>({
  name: 'BigInt',
  description: 'A non-negative integer of any size as a decimal string (block numbers, gas).',
  serialize: (value) => String(value),
  parseValue: (value) => parseString('BigInt', integerPattern, value),
  parseLiteral: (ast) => parseString('BigInt', integerPattern, ast.kind === Kind.STRING ? ast.value : undefined),
});

export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An instant as ISO 8601 UTC with second precision, e.g. "2024-02-27T15:12:23Z".',
  serialize: (value) => isoSeconds(value instanceof Date ? value : new Date(String(value))),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});
