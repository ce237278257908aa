import * as path from 'node:path';
import { EventStoreBuilder } from '../events/build';
import type { Event } from '../events/event';
import type { Cluster } from '../cluster/types';
import type { RunSource } from './model';

/** The least time between two rebuilds, and how much of the time rebuilding may take. */
const MIN_INTERVAL_MS = 250;
const BUSY_SHARE = 0.25;

/** A store of every event so far: the store is immutable, so live data means rebuilding it. */
export function storeOf(events: readonly Event[], file: string): RunSource['store'] {
  const builder = new EventStoreBuilder();
  const sink = builder.source(file, 'events');
  sink.expect(events.length);
  events.forEach((e, k) => sink.add(e, JSON.stringify(e), k + 1));
  return builder.build();
}

/**
 * A running cluster as a timeline run that follows its events: new events mark the
 * run stale and it is rebuilt at most every MIN_INTERVAL_MS, and never for more
 * than a quarter of the time (a rebuild of a big run takes a while; the view must
 * stay responsive meanwhile).
 */
export class LiveRun {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastCostMs = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly cluster: Pick<Cluster, 'events' | 'onEvent' | 'runDir'>,
    private readonly label: string,
    private readonly changed: (run: RunSource) => void,
  ) {
    this.unsubscribe = cluster.onEvent(() => this.schedule());
  }

  /** The run as it is now. */
  current(): RunSource {
    const started = Date.now();
    const file = path.join(this.cluster.runDir, 'events.jsonl');
    const store = storeOf(this.cluster.events(), file);
    this.lastCostMs = Date.now() - started;
    return { store, label: this.label, inputs: [file] };
  }

  dispose(): void {
    this.unsubscribe();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(MIN_INTERVAL_MS, this.lastCostMs / BUSY_SHARE);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed(this.current());
    }, wait);
  }
}
