import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Event } from './event';

export interface ReadEvents {
  events: Event[];
  /** Lines that were not valid events, with their 1-based line numbers. */
  bad: { line: number; error: string }[];
}

/** Reads an events.jsonl file; a bad line is counted and reported, never fatal. */
export async function readEventsFile(file: string): Promise<ReadEvents> {
  const out: ReadEvents = { events: [], bad: [] };
  if (!fs.existsSync(file)) return out;
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of rl) {
    n++;
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      out.bad.push({ line: n, error: `not JSON: ${(err as Error).message}` });
      continue;
    }
    const parsed = Event.safeParse(raw);
    if (parsed.success) out.events.push(parsed.data);
    else out.bad.push({ line: n, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
  }
  return out;
}
