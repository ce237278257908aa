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
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    const [first = '', second = ''] = buf.toString('utf8', 0, n).replace(/^\uFEFF/, '').split('\n', 2);
    const line1 = first.replace(/\r$/, '').trim();
    const line2 = second.replace(/\r$/, '').trim();
    if (line1 === '') {
      if (line2 !== '' && !line2.includes('(?<trace>') && !line2.startsWith('^')) return undefined;
      return { regex: SHIVIZ_DEFAULT_REGEX, ...(line2 !== '' && { delimiter: line2 }) };
    }
    if (!/\(\?<host>/.test(line1) || !/\(\?<(event|ddbench)>/.test(line1)) return undefined;
    return { regex: line1, ...(line2 !== '' && { delimiter: line2 }) };
  } finally {
    fs.closeSync(fd);
  }
}
