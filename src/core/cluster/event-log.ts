import fs from 'node:fs';
import { Event, type EventInput } from '../events/event';

/**
 * A run's events in arrival order: numbers them, keeps them in memory, tells
 * subscribers, and appends them to events.jsonl.
 */
export class EventLog {
  private readonly all: Event[] = [];
  private readonly listeners = new Set<(e: Event) => void>();
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
    for (const e of this.all) file.write(JSON.stringify(e) + '\n');
  }

  add(input: EventInput): Event {
    const event: Event = { id: String(this.all.length + 1), ...input };
    this.all.push(event);
    this.file?.write(JSON.stringify(event) + '\n');
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        // One broken subscriber must not cost the others (or the run) its events; it is still reported.
        process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'DDBenchEventListener');
      }
    }
    return event;
  }

  events(): readonly Event[] {
    return this.all;
  }

  subscribe(listener: (e: Event) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
