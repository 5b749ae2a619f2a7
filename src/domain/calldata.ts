// Decoding of inscription call data: the input data of an EVM transaction that carries a JSON
// inscription as a data URL, e.g. hex of `data:,{"p":"asc-20","op":"mint","tick":"tomray","amt":"1"}`.
// Pure and bounded: no I/O, the input size is capped before any work, and no input makes it throw
// anything but a CallDataError (the caller's mistake, a bad-input answer).

/** Largest accepted call data, in bytes (twice that in hex digits, plus an optional 0x). */
export const maxCallDataBytes = 4_096;

/** Media types an inscription may declare before its JSON payload (`data:<type>[;params],`). */
const mediaTypes = new Set(['', 'application/json', 'text/plain']);

export interface InscriptionOperation {
  /** Protocol, lower case (asc-20, brc-20, …). */
  protocol: string;
  /** Operation, lower case (deploy, mint, transfer, list, …). */
  operation: string;
  /** Tick, lower case (ticks are stored and compared in lower case). */
  tick: string;
  /** The `amt` member as written, when it is a string or a number; otherwise null. */
  amount: string | null;
  /** The JSON payload as decoded. */
  payload: string;
}

/** Call data that is not hex at all (or too large): the caller's mistake. */
export class CallDataError extends Error {
  override name = 'CallDataError';
}

const hexPattern = /^[0-9a-fA-F]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes hex call data (with or without 0x). Throws CallDataError when the input is not even-length
 * hex or is larger than maxCallDataBytes; returns null when it is hex but not a JSON inscription
 * (not UTF-8, not a `data:` URL of an accepted type, not a JSON object with string p, op and tick).
 */
export function decodeCallData(input: string): InscriptionOperation | null {
  const hex = input.startsWith('0x') || input.startsWith('0X') ? input.slice(2) : input;
  if (hex.length === 0) throw new CallDataError('call data is empty');
  if (hex.length > maxCallDataBytes * 2) throw new CallDataError(`call data exceeds ${maxCallDataBytes} bytes`);
  if (hex.length % 2 !== 0 || !hexPattern.test(hex)) {
    throw new CallDataError('call data must be hex digits (an even number of them, optionally after 0x)');
  }
  let text: string;
  try {
    text = utf8.decode(Buffer.from(hex, 'hex'));
  } catch {
    return null;
  }
  return parseInscription(text);
}

/** Parses `data:[<type>][;<param>…],<json>` into an operation, or null. */
function parseInscription(text: string): InscriptionOperation | null {
  if (!text.startsWith('data:')) return null;
  const comma = text.indexOf(',');
  if (comma < 0) return null;
  const [type = '', ...params] = text.slice('data:'.length, comma).split(';');
  if (!mediaTypes.has(type.trim().toLowerCase())) return null;
  // base64 payloads are not inscriptions of these protocols
  if (params.some((p) => p.trim().toLowerCase() === 'base64')) return null;
  const payload = text.slice(comma + 1).trim();
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const { p, op, tick, amt } = json as Record<string, unknown>;
  if (!isName(p) || !isName(op) || !isName(tick)) return null;
  return {
    protocol: p.toLowerCase(),
    operation: op.toLowerCase(),
    tick: tick.toLowerCase(),
    amount: typeof amt === 'string' ? amt : typeof amt === 'number' && Number.isFinite(amt) ? String(amt) : null,
    payload,
  };
}

const isName = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 256;
