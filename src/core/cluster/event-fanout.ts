import type { Event } from '../events/event';

/**
 * What every cluster's event log does with an event once it is built: keeps it, in
 * arrival order and numbered from 1, and tells each subscriber. The live log adds a
 * file; the simulated one builds its events its own (faster) way.
 */
export class EventFanout {
  private readonly all: Event[] = [];
  private readonly listeners = new Set<(e: Event) => void>();

  events(): readonly Event[] {
    return this.all;
  }

  subscribe(listener: (e: Event) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The id the next event gets. */
  protected nextId(): string {
    return String(this.all.length + 1);
  }

  /** Keeps the event and tells every subscriber. */
  protected publish(event: Event): Event {
    this.all.push(event);
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
}
