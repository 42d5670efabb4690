// A strict, bounded JSON parser for untrusted headers: rejects duplicate keys and deep nesting.
//
// `JSON.parse` silently keeps the last of two equal keys, so a header could name one tensor twice
// and hide the first entry; it also has no depth limit. This parser follows RFC 8259 exactly
// (no comments, no trailing commas, no lone surrogates) and reports the character position of
// every error. Objects come back as `Map`s (no prototype pollution through `__proto__` keys).

/** A non-integer JSON number literal (it had a fraction or an exponent), kept apart from integers. */
export class JsonFloat {
  constructor(readonly value: number) {}
}

/**
 * A parsed JSON value. Integer literals are `number` when |v| ≤ 2^53 − 1, `bigint` beyond that
 * (so precision loss is detectable); literals with a fraction or exponent are `JsonFloat`.
 */
export type JsonValue = null | boolean | string | number | bigint | JsonFloat | JsonValue[] | JsonObjectMap;
/** A parsed JSON object: keys in document order. */
export type JsonObjectMap = Map<string, JsonValue>;

/** Thrown by `parseStrictJson`; `kind` separates duplicate keys from other syntax errors. */
export class StrictJsonError extends Error {
  constructor(
    readonly kind: 'syntax' | 'duplicate-key' | 'too-deep',
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'StrictJsonError';
  }
}

const MAX_DEPTH_DEFAULT = 64;

/**
 * Parses `text` as one JSON value with RFC 8259 grammar, rejecting duplicate object keys at any level
 * and nesting deeper than `maxDepth` (default 64). Throws `StrictJsonError` with the position.
 */
export function parseStrictJson(text: string, maxDepth: number = MAX_DEPTH_DEFAULT): JsonValue {
  const parser = new Parser(text, maxDepth);
  parser.skipWhitespace();
  const value = parser.parseValue(0);
  parser.skipWhitespace();
  if (parser.pos !== text.length) parser.fail('unexpected text after the JSON value');
  return value;
}

const INTEGER_RE = /-?(?:0|[1-9][0-9]*)/y;
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  pos = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  fail(message: string, kind: StrictJsonError['kind'] = 'syntax'): never {
    const where =
      this.pos >= this.text.length ? `the end of the text (character ${this.pos})` : `character ${this.pos}`;
    throw new StrictJsonError(kind, `${message} at ${where}`, this.pos);
  }

  skipWhitespace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  parseValue(depth: number): JsonValue {
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.parseObject(depth + 1);
      case '[':
        return this.parseArray(depth + 1);
      case '"':
        return this.parseString();
      case 't':
        return this.parseLiteral('true', true);
      case 'f':
        return this.parseLiteral('false', false);
      case 'n':
        return this.parseLiteral('null', null);
      case undefined:
        return this.fail('unexpected end of JSON');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.parseNumber();
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
    }
  }

  private parseLiteral<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`invalid literal (expected ${word})`);
    this.pos += word.length;
    return value;
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) this.fail(`JSON nested deeper than ${this.maxDepth} levels`, 'too-deep');
  }

  private parseObject(depth: number): JsonObjectMap {
    this.enter(depth);
    this.pos++; // '{'
    const map: JsonObjectMap = new Map();
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return map;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') this.fail('expected a string key');
      const keyPos = this.pos;
      const key = this.parseString();
      if (map.has(key)) {
        this.pos = keyPos;
        this.fail(`duplicate key ${JSON.stringify(key)}`, 'duplicate-key');
      }
      this.skipWhitespace();
      if (this.text[this.pos] !== ':') this.fail("expected ':' after an object key");
      this.pos++;
      this.skipWhitespace();
      map.set(key, this.parseValue(depth));
      this.skipWhitespace();
      const sep = this.text[this.pos];
      if (sep === ',') {
        this.pos++;
        this.skipWhitespace();
      } else if (sep === '}') {
        this.pos++;
        return map;
      } else {
        this.fail("expected ',' or '}' in an object");
      }
    }
  }

  private parseArray(depth: number): JsonValue[] {
    this.enter(depth);
    this.pos++; // '['
    const items: JsonValue[] = [];
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(this.parseValue(depth));
      this.skipWhitespace();
      const sep = this.text[this.pos];
      if (sep === ',') {
        this.pos++;
        this.skipWhitespace();
      } else if (sep === ']') {
        this.pos++;
        return items;
      } else {
        this.fail("expected ',' or ']' in an array");
      }
    }
  }

  private parseNumber(): number | bigint | JsonFloat {
    NUMBER_RE.lastIndex = this.pos;
    const m = NUMBER_RE.exec(this.text);
    if (m === null) return this.fail('invalid number');
    const literal = m[0];
    INTEGER_RE.lastIndex = this.pos;
    const intMatch = INTEGER_RE.exec(this.text);
    this.pos += literal.length;
    if (intMatch !== null && intMatch[0].length === literal.length) {
      const n = Number(literal);
      return Number.isSafeInteger(n) ? n : BigInt(literal);
    }
    return new JsonFloat(Number(literal));
  }

  private parseString(): string {
    const t = this.text;
    const start = ++this.pos; // skip opening quote
    // Fast path: no escapes.
    let i = start;
    for (; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        return checkSurrogates(t.slice(start, i), this, start);
      }
      if (c === 0x5c) break;
      if (c < 0x20) {
        this.pos = i;
        this.fail('unescaped control character in a string');
      }
    }
    let out = t.slice(start, i);
    this.pos = i;
    for (;;) {
      if (this.pos >= t.length) this.fail('unterminated string');
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        return checkSurrogates(out, this, start);
      }
      if (c < 0x20) this.fail('unescaped control character in a string');
      if (c !== 0x5c) {
        out += t[this.pos];
        this.pos++;
        continue;
      }
      const e = t[this.pos + 1];
      this.pos += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = t.slice(this.pos, this.pos + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 4;
          break;
        }
        default:
          this.pos -= 2;
          this.fail('invalid escape sequence');
      }
    }
  }
}

/** Rejects lone UTF-16 surrogates (they cannot be encoded as UTF-8, and serde_json rejects them too). */
function checkSurrogates(s: string, parser: Parser, start: number): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    } else if (c < 0xdc00 || c > 0xdfff) {
      continue;
    }
    parser.pos = start;
    parser.fail('string holds a lone UTF-16 surrogate');
  }
  return s;
}
