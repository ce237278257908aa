import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Event } from '../events/event';
import { redact } from '../secrets';

/** The events as an events.jsonl file holds them, one JSON object a line, redacted (secrets.ts). */
function lines(events: readonly Event[]): string[] {
  return events.map((e) => redact(JSON.stringify(e)) + '\n');
}

/** SHA-256 of the events file a run would write: equal digests mean byte-identical files. */
export function eventsDigest(events: readonly Event[]): string {
  const hash = createHash('sha256');
  for (const line of lines(events)) hash.update(line);
  return hash.digest('hex');
}

export function writeEventsFile(file: string, events: readonly Event[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines(events).join(''));
}
