import fs from 'node:fs';
import { Event, type EventInput } from '../events/event';
import { redactJson } from '../secrets';
import { EventFanout } from './event-fanout';

/**
 * A run's events in arrival order: numbers them, keeps them in memory, tells
 * subscribers, and appends them to events.jsonl.
 */
export class EventLog extends EventFanout {
  private file: fs.WriteStream | undefined;

  /** Starts appending to `path`; events added before are written first. */
  open(path: string): void {
    if (this.file !== undefined) return;
    const file = fs.createWriteStream(path, { flags: 'a' });
    // Events stay in memory if the file fails (folder removed, disk full); the failure is reported, not fatal.
    file.on('error', (err) => {
      this.file = undefined;
      process.emitWarning(`cannot write ${path}: ${err.message}; events are kept in memory only`, 'DDBenchEventLog');
    });
    this.file = file;
    for (const e of this.events()) file.write(JSON.stringify(e) + '\n');
  }

  /** Redacted before it is kept, so no reader (file, node_logs, timeline) sees a secret a node printed. */
  add(input: EventInput): Event {
    const event: Event = redactJson({ id: this.nextId(), ...input });
    this.file?.write(JSON.stringify(event) + '\n');
    return this.publish(event);
  }

  /** Flushes and closes the file; later events stay in memory only. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    if (file !== undefined) await new Promise<void>((resolve) => file.end(resolve));
  }
}

/** Parses a node's stdout line as an event (without id); undefined if it is not one. */
export function parseEventLine(line: string): EventInput | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = Event.omit({ id: true }).safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
