import { KINDS, LEVELS } from './store';

/**
 * A byte-level reader of the common shape of an events.jsonl line, so a million
 * lines cost no `JSON.parse` (which alone takes longer than the whole load may)
 * and no object per line. It is deliberately partial: it accepts a line only when
 * it is certain that `JSON.parse` would accept it and `isEventRecord` would hold,
 * with the same values for everything the store keeps. Anything else (escapes in
 * the values it reads, duplicate keys, numbers it does not read exactly, a missing
 * or mistyped member, invalid JSON) makes `scan` return false, and the caller
 * takes the general path, which reports bad lines as it always did.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
/** Counters live in Uint32Arrays. */
const MAX_COUNTER = 0xffffffff;
/** Integers up to 15 digits add up exactly in a double. */
const EXACT_DIGITS = 15;
/** Deeper values go the general way (a nesting stack of fixed size keeps skipping allocation-free). */
const MAX_DEPTH = 256;

const bytesOf = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const KIND_BYTES = KINDS.map(bytesOf);
const LEVEL_BYTES = LEVELS.map(bytesOf);

// Top-level members the store reads, as bits of a mask that catches duplicates.
const K_TS = 1;
const K_ID = 2;
const K_NODE = 4;
const K_KIND = 8;
const K_LEVEL = 16;
const K_MSG = 32;
const K_MSG_ID = 64;
const K_PEER = 128;
const K_VC = 256;
const K_SPAN = 512;
const K_SRC = 1024;
const K_FIELDS = 2048;
/** Member names by bit position. */
const MEMBER_NAMES = ['ts', 'id', 'node', 'kind', 'level', 'msg', 'msgId', 'peer', 'vc', 'span', 'src', 'fields'].map(bytesOf);
const TRACE_ID = bytesOf('traceId');
const SPAN_ID = bytesOf('spanId');
const PARENT_ID = bytesOf('parentId');
const NAME = bytesOf('name');
const END = bytesOf('end');
const FILE = bytesOf('file');
const LINE = bytesOf('line');
const TRUE = bytesOf('true');
const FALSE = bytesOf('false');
const NULL = bytesOf('null');

/** A string value's place in the line: bytes [start, end) between its quotes, no escapes in it. */
export interface ByteRange {
  start: number;
  end: number;
  /** All its bytes are below 0x80 (so each byte is its character). */
  ascii: boolean;
}

export interface ScannedSpan {
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  end: number | undefined;
}

function range(): ByteRange {
  return { start: -1, end: -1, ascii: true };
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/**
 * Reads lines into its own fields (one scanner serves a whole file, so a line
 * costs no allocation unless it carries a span or a trace id).
 */
export class EventLineScanner {
  ts = 0;
  readonly node = range();
  kind = -1;
  /** 0 for none, else 1 + the index in LEVELS (the store's level code). */
  level = 0;
  /** Present when `start` >= 0. */
  readonly msg = range();
  readonly msgId = range();
  readonly peer = range();
  hasClock = false;
  /** Clock entries: `clockSize` keys (ranges in the line) and their counters. */
  clockSize = 0;
  clockKeyStart = new Int32Array(16);
  clockKeyEnd = new Int32Array(16);
  clockKeyAscii = new Uint8Array(16);
  clockValue = new Uint32Array(16);
  span: ScannedSpan | undefined;
  /** `fields.traceId` when it is a string. */
  fieldsTraceId: string | undefined;

  /** Always a Buffer (never a plain Uint8Array), so every byte read here stays monomorphic. */
  private b: Buffer = Buffer.alloc(0);
  private p = 0;
  private end = 0;
  /** Set by readString: where the string's content ended and whether it was ASCII. */
  private strEnd = 0;
  private strAscii = true;
  /** Set by readNumber: the value, and whether the text was digits only. */
  private num = 0;
  private numPlain = false;
  private readonly stack = new Uint8Array(MAX_DEPTH);

  /** Reads the line at bytes[start, end); false means "not certain: use JSON.parse". */
  scan(bytes: Buffer, start: number, end: number): boolean {
    this.b = bytes;
    this.p = start;
    this.end = end;
    this.level = 0;
    this.kind = -1;
    this.msg.start = this.msgId.start = this.peer.start = -1;
    this.hasClock = false;
    this.clockSize = 0;
    this.span = undefined;
    this.fieldsTraceId = undefined;
    const b = this.b;
    this.ws();
    if (this.p >= end || b[this.p] !== OPEN_OBJECT) return false;
    this.p++;
    let seen = 0;
    for (;;) {
      this.ws();
      const keyStart = this.p;
      if (!this.readString()) return false;
      const member = this.member(keyStart + 1, this.strEnd);
      if ((seen & member) !== 0) return false;
      seen |= member;
      if (!this.colon()) return false;
      if (!this.readMember(member)) return false;
      this.ws();
      if (this.p >= end) return false;
      const c = b[this.p++];
      if (c === COMMA) continue;
      if (c !== CLOSE_OBJECT) return false;
      break;
    }
    this.ws();
    const required = K_TS | K_NODE | K_KIND;
    return this.p === end && (seen & required) === required;
  }

  private readMember(member: number): boolean {
    switch (member) {
      case K_TS:
        if (!this.readNumber()) return false;
        this.ts = this.num;
        return true;
      case K_NODE:
        return this.readRange(this.node);
      case K_KIND:
        this.kind = this.readKeyword(KIND_BYTES);
        return this.kind >= 0;
      case K_LEVEL: {
        const level = this.readKeyword(LEVEL_BYTES);
        this.level = level + 1;
        return level >= 0;
      }
      case K_MSG:
        return this.readRange(this.msg);
      case K_MSG_ID:
        return this.readRange(this.msgId);
      case K_PEER:
        return this.readRange(this.peer);
      case K_ID:
        return this.b[this.p] === QUOTE && this.skipValue();
      case K_VC:
        return this.readClock();
      case K_SPAN:
        return this.readSpan();
      case K_SRC:
        return this.readSource();
      case K_FIELDS:
        return this.readFields();
      default:
        return this.skipValue();
    }
  }

  /** Which member the key at [start, end) is (0 for one the store does not read). */
  private member(start: number, end: number): number {
    const b = this.b;
    switch (end - start) {
      case 2:
        return b[start] === 0x74 ? this.memberIf(start, end, K_TS) : b[start] === 0x69 ? this.memberIf(start, end, K_ID) : this.memberIf(start, end, K_VC);
      case 3:
        return b[start] === 0x6d ? this.memberIf(start, end, K_MSG) : this.memberIf(start, end, K_SRC);
      case 4:
        switch (b[start]) {
          case 0x6e:
            return this.memberIf(start, end, K_NODE);
          case 0x6b:
            return this.memberIf(start, end, K_KIND);
          case 0x70:
            return this.memberIf(start, end, K_PEER);
          default:
            return this.memberIf(start, end, K_SPAN);
        }
      case 5:
        return b[start] === 0x6c ? this.memberIf(start, end, K_LEVEL) : this.memberIf(start, end, K_MSG_ID);
      case 6:
        return this.memberIf(start, end, K_FIELDS);
      default:
        return 0;
    }
  }

  /** `bit` if the key is that member's name, else 0. */
  private memberIf(start: number, end: number, bit: number): number {
    return this.keyIs(start, end, MEMBER_NAMES[31 - Math.clz32(bit)]) ? bit : 0;
  }

  private keyIs(start: number, end: number, name: Uint8Array): boolean {
    if (end - start !== name.length) return false;
    const b = this.b;
    for (let i = 0; i < name.length; i++) if (b[start + i] !== name[i]) return false;
    return true;
  }

  private ws(): void {
    const b = this.b;
    const end = this.end;
    let p = this.p;
    // Lines rarely have whitespace between tokens, and every JSON token starts above 0x20.
    if (p >= end || b[p] > 0x20) return;
    while (p < end && isSpace(b[p])) p++;
    this.p = p;
  }

  /** Skips whitespace, a colon and whitespace. */
  private colon(): boolean {
    this.ws();
    if (this.p >= this.end || this.b[this.p] !== COLON) return false;
    this.p++;
    this.ws();
    return this.p < this.end;
  }

  /** A string without escapes at p; sets strEnd (its closing quote) and strAscii, and moves past it. */
  private readString(): boolean {
    const b = this.b;
    const end = this.end;
    let i = this.p;
    if (i >= end || b[i] !== QUOTE) return false;
    i++;
    let ascii = true;
    for (;;) {
      if (i >= end) return false;
      const c = b[i];
      if (c === QUOTE) break;
      if (c === BACKSLASH || c < 0x20) return false;
      if (c >= 0x80) ascii = false;
      i++;
    }
    this.strEnd = i;
    this.strAscii = ascii;
    this.p = i + 1;
    return true;
  }

  private readRange(out: ByteRange): boolean {
    const start = this.p + 1;
    if (!this.readString()) return false;
    out.start = start;
    out.end = this.strEnd;
    out.ascii = this.strAscii;
    return true;
  }

  /** A string value decoded (as JSON.parse would give it); undefined if it is none this scanner reads. */
  private readText(): string | undefined {
    const start = this.p + 1;
    if (!this.readString()) return undefined;
    return this.b.toString(this.strAscii ? 'latin1' : 'utf8', start, this.strEnd);
  }

  /** A string equal to one of `options`; its index, or -1. */
  private readKeyword(options: readonly Uint8Array[]): number {
    const start = this.p + 1;
    if (!this.readString()) return -1;
    for (let k = 0; k < options.length; k++) if (this.keyIs(start, this.strEnd, options[k])) return k;
    return -1;
  }

  /** A JSON number at p: sets num (exact when digits only and short) and numPlain. */
  private readNumber(): boolean {
    const b = this.b;
    const end = this.end;
    const start = this.p;
    let i = start;
    const negative = i < end && b[i] === MINUS;
    if (negative) i++;
    const digitsStart = i;
    if (i >= end) return false;
    // The value is taken on the way; it is used only when it is exact (checked below).
    let v = 0;
    if (b[i] === ZERO) i++;
    else if (b[i] > ZERO && b[i] <= NINE) {
      for (; i < end; i++) {
        const c = b[i];
        if (c < ZERO || c > NINE) break;
        v = v * 10 + (c - ZERO);
      }
    } else return false;
    const digitsEnd = i;
    let plain = true;
    if (i < end && b[i] === DOT) {
      plain = false;
      i++;
      const from = i;
      while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
      if (i === from) return false;
    }
    if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
      plain = false;
      i++;
      if (i < end && (b[i] === PLUS || b[i] === MINUS)) i++;
      const from = i;
      while (i < end && b[i] >= ZERO && b[i] <= NINE) i++;
      if (i === from) return false;
    }
    this.p = i;
    if (plain && digitsEnd - digitsStart <= EXACT_DIGITS) {
      this.num = negative ? -v : v;
    } else {
      // Number() and JSON.parse round a valid JSON number's text alike.
      this.num = Number(this.b.toString('latin1', start, i));
    }
    this.numPlain = plain && !negative && digitsEnd - digitsStart <= EXACT_DIGITS;
    return true;
  }

  /** At an object's `{`: 1 if a member follows (p at its key), 0 if the object is empty (p after it), -1 if it is no object. */
  private objectStart(): number {
    if (this.b[this.p] !== OPEN_OBJECT) return -1;
    this.p++;
    this.ws();
    if (this.p >= this.end) return -1;
    if (this.b[this.p] !== CLOSE_OBJECT) return 1;
    this.p++;
    return 0;
  }

  /**
   * At a member's key: reads it and the colon, leaving p at the value; false if
   * there is no key without escapes (a key with escapes might spell a member name).
   */
  private key(): boolean {
    if (!this.readString()) return false;
    return this.colon();
  }

  /** After a member's value: 1 if another member follows (p at its key), 0 at the end of the object (p after it), -1 otherwise. */
  private objectNext(): number {
    this.ws();
    if (this.p >= this.end) return -1;
    const c = this.b[this.p++];
    if (c === CLOSE_OBJECT) return 0;
    if (c !== COMMA) return -1;
    this.ws();
    return 1;
  }

  private readClock(): boolean {
    this.hasClock = true;
    const b = this.b;
    let more = this.objectStart();
    for (; more === 1; more = this.objectNext()) {
      const keyStart = this.p + 1;
      if (!this.key()) return false;
      const keyEnd = this.strEnd;
      // readString set strAscii for this key; reading the number leaves it alone.
      const ascii = this.strAscii;
      // Keys that look like array indices enumerate before the others in JavaScript objects.
      if (keyEnd === keyStart || (b[keyStart] >= ZERO && b[keyStart] <= NINE)) return false;
      if (!this.readNumber() || !this.numPlain || this.num > MAX_COUNTER) return false;
      const n = this.clockSize;
      // A repeated key keeps its first place but its last value in JSON.parse's object.
      for (let k = 0; k < n; k++) {
        const s = this.clockKeyStart[k];
        if (this.clockKeyEnd[k] - s === keyEnd - keyStart && this.sameBytes(s, keyStart, keyEnd - keyStart)) return false;
      }
      if (n === this.clockKeyStart.length) this.growClock();
      this.clockKeyStart[n] = keyStart;
      this.clockKeyEnd[n] = keyEnd;
      this.clockKeyAscii[n] = ascii ? 1 : 0;
      this.clockValue[n] = this.num;
      this.clockSize = n + 1;
    }
    return more === 0;
  }

  private sameBytes(a: number, b: number, length: number): boolean {
    const bytes = this.b;
    for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
    return true;
  }

  private growClock(): void {
    const size = this.clockKeyStart.length * 2;
    const grow = <T extends Int32Array | Uint8Array | Uint32Array>(a: T, make: new (n: number) => T): T => {
      const next = new make(size);
      next.set(a);
      return next;
    };
    this.clockKeyStart = grow(this.clockKeyStart, Int32Array);
    this.clockKeyEnd = grow(this.clockKeyEnd, Int32Array);
    this.clockKeyAscii = grow(this.clockKeyAscii, Uint8Array);
    this.clockValue = grow(this.clockValue, Uint32Array);
  }

  private readSpan(): boolean {
    let traceId: string | undefined;
    let spanId: string | undefined;
    let parentId: string | undefined;
    let name = false;
    let end: number | undefined;
    let more = this.objectStart();
    for (; more === 1; more = this.objectNext()) {
      const keyStart = this.p + 1;
      if (!this.key()) return false;
      const keyEnd = this.strEnd;
      let ok: boolean;
      if (this.keyIs(keyStart, keyEnd, TRACE_ID)) ok = traceId === undefined && (traceId = this.readText()) !== undefined;
      else if (this.keyIs(keyStart, keyEnd, SPAN_ID)) ok = spanId === undefined && (spanId = this.readText()) !== undefined;
      else if (this.keyIs(keyStart, keyEnd, PARENT_ID)) ok = parentId === undefined && (parentId = this.readText()) !== undefined;
      else if (this.keyIs(keyStart, keyEnd, NAME)) ok = !name && (name = this.b[this.p] === QUOTE && this.skipValue());
      else if (this.keyIs(keyStart, keyEnd, END)) {
        ok = end === undefined && this.readNumber();
        end = this.num;
      } else ok = this.skipValue();
      if (!ok) return false;
    }
    if (more !== 0 || traceId === undefined || spanId === undefined || !name) return false;
    this.span = { traceId, spanId, parentId, end };
    return true;
  }

  private readSource(): boolean {
    let file = false;
    let line = false;
    let more = this.objectStart();
    for (; more === 1; more = this.objectNext()) {
      const keyStart = this.p + 1;
      if (!this.key()) return false;
      const keyEnd = this.strEnd;
      let ok: boolean;
      if (this.keyIs(keyStart, keyEnd, FILE)) ok = !file && (file = this.b[this.p] === QUOTE && this.skipValue());
      else if (this.keyIs(keyStart, keyEnd, LINE)) ok = !line && (line = this.readNumber() && this.numPlain && this.num > 0);
      else ok = this.skipValue();
      if (!ok) return false;
    }
    return more === 0 && file && line;
  }

  private readFields(): boolean {
    let traceId = false;
    let more = this.objectStart();
    for (; more === 1; more = this.objectNext()) {
      const keyStart = this.p + 1;
      if (!this.key()) return false;
      if (!this.keyIs(keyStart, this.strEnd, TRACE_ID)) {
        if (!this.skipValue()) return false;
        continue;
      }
      if (traceId) return false;
      traceId = true;
      if (this.b[this.p] !== QUOTE) {
        if (!this.skipValue()) return false;
        continue;
      }
      this.fieldsTraceId = this.readText();
      if (this.fieldsTraceId === undefined) return false;
    }
    return more === 0;
  }

  /** A string at p with valid escapes (any content). */
  private skipString(): boolean {
    const b = this.b;
    const end = this.end;
    let i = this.p + 1;
    for (;;) {
      if (i >= end) return false;
      const c = b[i++];
      if (c === QUOTE) break;
      if (c < 0x20) return false;
      if (c !== BACKSLASH) continue;
      if (i >= end) return false;
      const e = b[i++];
      if (e === 0x75) {
        if (i + 4 > end) return false;
        for (let k = 0; k < 4; k++, i++) if (!isHex(b[i])) return false;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) {
        return false;
      }
    }
    this.p = i;
    return true;
  }

  private literal(word: Uint8Array): boolean {
    if (this.p + word.length > this.end) return false;
    for (let k = 0; k < word.length; k++) if (this.b[this.p + k] !== word[k]) return false;
    this.p += word.length;
    return true;
  }

  private skipScalar(): boolean {
    const c = this.b[this.p];
    if (c === QUOTE) return this.skipString();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.readNumber();
    if (c === 0x74) return this.literal(TRUE);
    if (c === 0x66) return this.literal(FALSE);
    if (c === 0x6e) return this.literal(NULL);
    return false;
  }

  /** Any JSON value at p, checked as strictly as JSON.parse checks it, without building it. */
  private skipValue(): boolean {
    const b = this.b;
    const stack = this.stack;
    let depth = 0;
    // Alternates between expecting a value and what may follow one, on an explicit stack.
    for (;;) {
      if (this.p >= this.end) return false;
      const c = b[this.p];
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (depth === MAX_DEPTH) return false;
        stack[depth++] = c;
        this.p++;
        this.ws();
        if (this.p >= this.end) return false;
        const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
        if (b[this.p] === close) {
          this.p++;
          depth--;
        } else {
          if (c === OPEN_OBJECT && !this.objectKey()) return false;
          continue;
        }
      } else if (!this.skipScalar()) {
        return false;
      }
      // After a value: close containers or move to the next element.
      for (;;) {
        if (depth === 0) return true;
        this.ws();
        if (this.p >= this.end) return false;
        const next = b[this.p++];
        const top = stack[depth - 1];
        if (next === COMMA) {
          this.ws();
          if (top === OPEN_OBJECT && !this.objectKey()) return false;
          break;
        }
        if (next !== (top === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return false;
        depth--;
      }
    }
  }

  /** A key and its colon, leaving p at the value. */
  private objectKey(): boolean {
    if (this.b[this.p] !== QUOTE) return false;
    return this.skipString() && this.colon();
  }
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
