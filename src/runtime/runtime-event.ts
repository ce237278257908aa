import type { Fields } from './types';
import type { SourceLocation } from './source-location';
import type { VectorClock } from './vclock';

/**
 * What a node's runtime reports: the timeline's event shape (`Event` in
 * src/core/events/event.ts) without the `id`, which the collector assigns. Kept free of core imports because the runtime ships alone.
 */
export interface RuntimeEvent {
  /** Microseconds since the run started. */
  ts: number;
  node: string;
  kind: 'log' | 'send' | 'recv';
  level?: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  msgId?: string;
  peer?: string;
  vc: VectorClock;
  src?: SourceLocation;
  fields?: Fields;
}
