import * as fs from 'node:fs';
import { causality } from '../causality';
import type { EventStore } from '../store';
import { writeTextFile } from '../write';
import { SHIVIZ_DEFAULT_REGEX } from './text';

/**
 * ShiViz's log format (https://bestchai.bitbucket.io/shiviz/). A file ShiViz opens
 * starts with its parser regex on line 1 and the execution delimiter on line 2
 * (empty: one execution); the log follows. Our records are two lines: the event
 * text, then `host {clock} kind {event JSON}`. The clock is the derived one, which
 * ShiViz's checks accept by construction (own counter 1, 2, 3, ... per host; other
 * entries exactly what happens-before implies). The `ddbench` group carries the
 * full event, so reading the file back gives the same events, original clocks
 * included; ShiViz shows `kind` and `ddbench` as fields.
 */
export const SHIVIZ_EXPORT_REGEX = '(?<event>.*)\\n(?<host>\\S+) (?<clock>\\{[^}]*\\}) (?<kind>\\S+) (?<ddbench>\\{.*\\})';

/** Host names without whitespace, since the regex takes the host up to the first space. */
function hostName(node: string): string {
  return node.replace(/\s/g, '_') || '_';
}

/** A clock as JSON with no `}` inside keys, so the regex's `\{[^}]*\}` takes all of it. */
function clockText(vc: Record<string, number>): string {
  return `{${Object.entries(vc)
    .map(([host, count]) => `${JSON.stringify(hostName(host)).replace(/}/g, '\\u007d')}:${count}`)
    .join(',')}}`;
}

function eventText(msg: string | undefined, kind: string): string {
  const text = (msg ?? '').replace(/\r?\n/g, ' ⏎ ').trim();
  return text === '' ? `(${kind})` : text;
}

export async function writeShiviz(store: EventStore, out: string): Promise<void> {
  const hb = causality(store);
  await writeTextFile(out, async (w) => {
    await w.write(`${SHIVIZ_EXPORT_REGEX}\n\n`);
    for (let i = 0; i < store.size; i++) {
      const e = store.event(i);
      await w.write(`${eventText(e.msg, e.kind)}\n${hostName(e.node)} ${clockText(hb.clockOf(i))} ${e.kind} ${JSON.stringify(e)}\n`);
    }
  });
}

export interface ShivizHeader {
  regex: string;
  delimiter?: string;
}

/** Bytes read to find a header: regexes are short lines. */
const HEAD_BYTES = 64 * 1024;

/**
 * The parser regex and delimiter at the top of a ShiViz file, if it has them: line 1
 * is a header when it declares the named groups ShiViz needs, or when it is empty
 * (ShiViz's default parser) and line 2 is empty or reads as a delimiter regex.
 */
export function readShivizHeader(file: string): ShivizHeader | undefined {
  const [first = '', second = ''] = headOf(file).split('\n', 2);
  const line1 = first.replace(/\r$/, '').trim();
  const line2 = second.replace(/\r$/, '').trim();
  if (line1 === '') {
    if (line2 !== '' && !line2.includes('(?<trace>') && !line2.startsWith('^')) return undefined;
    return { regex: SHIVIZ_DEFAULT_REGEX, ...(line2 !== '' && { delimiter: line2 }) };
  }
  if (!/\(\?<host>/.test(line1) || !/\(\?<(event|ddbench)>/.test(line1)) return undefined;
  return { regex: line1, ...(line2 !== '' && { delimiter: line2 }) };
}

function headOf(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.toString('utf8', 0, n).replace(/^\uFEFF/, '');
  } finally {
    fs.closeSync(fd);
  }
}

/** ShiViz's (and GoVector's) other two-line layout: the host and clock, then the event. */
export const SHIVIZ_HOST_FIRST_REGEX = '(?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)';
/** The execution delimiter of ShiViz's multi-execution examples. */
export const SHIVIZ_EXAMPLE_DELIMITER = '^=== (?<trace>.*) ===$';

/**
 * The layout of a ShiViz log without a header, from its first lines: event then
 * `host {clock}` (ShiViz's default), or `host {clock}` then event (GoVector's), each
 * optionally split into executions by `=== label ===` lines. Undefined when neither fits.
 */
export function guessShivizLayout(file: string): ShivizHeader | undefined {
  const lines = headOf(file)
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
  const delimiter = new RegExp(SHIVIZ_EXAMPLE_DELIMITER);
  const multi = lines.length > 0 && delimiter.test(lines[0]);
  const body = lines.filter((l) => !delimiter.test(l));
  if (body.length < 2) return undefined;
  const pair = `${body[0]}\n${body[1]}`;
  const withDelimiter = multi ? { delimiter: SHIVIZ_EXAMPLE_DELIMITER } : {};
  // A host line is one word and a JSON object; tried first, since a default-layout event line can look like anything.
  if (new RegExp(`^${SHIVIZ_HOST_FIRST_REGEX}$`).test(pair) && /^\S+ \{.*\}$/.test(body[0])) return { regex: SHIVIZ_HOST_FIRST_REGEX, ...withDelimiter };
  if (new RegExp(`^${SHIVIZ_DEFAULT_REGEX}`).test(pair)) return { regex: SHIVIZ_DEFAULT_REGEX, ...withDelimiter };
  return undefined;
}
