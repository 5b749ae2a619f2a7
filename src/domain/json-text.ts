// A value already serialised as JSON, marked so that a reply writer puts its text on the wire verbatim.

const marker: unique symbol = Symbol('json-text');

export interface JsonText {
  readonly [marker]: true;
  readonly text: string;
}

export function jsonText(text: string): JsonText {
  return { [marker]: true, text };
}

export function isJsonText(value: unknown): value is JsonText {
  return typeof value === 'object' && value !== null && (value as Partial<JsonText>)[marker] === true;
}
