import type { DurableStore } from './disk';
import { BufferedDisk } from './disk';
import { seededRandom } from './random';
import type { RuntimeEvent } from './runtime-event';
import { callerLocation, errorLocation } from './source-location';
import type { Fields, Incoming, Json, Logger, NodeRuntime, TimerHandle } from './types';
import { VectorClockTracker } from './vclock';
import type { MsgFrame } from './wire';

/** What differs between the live host and a simulated run: time, timers, transport, storage. */
export interface RuntimeHost {
  /** This node's wall clock in epoch ms, before any skew. */
  wallClockMs(): number;
  /** Timestamp for events: microseconds since the run started. */
  eventTime(): number;
  setTimer(ms: number, fn: () => void): TimerHandle;
  transmit(frame: MsgFrame): void;
  emit(event: RuntimeEvent): void;
  store: DurableStore;
}

export interface NodeRuntimeOptions {
  id: string;
  nodes: readonly string[];
  config: Readonly<Record<string, Json>>;
  seed: number;
  /** Source root of the system, so log locations are relative to it. */
  srcRoot: string;
  /** 0 for a node's first process, then one more per restart. */
  incarnation: number;
  /** Where this node's own vector-clock counter resumes after a restart. */
  vcStart: number;
  host: RuntimeHost;
}

/** The runtime plus the hooks its host drives. */
export interface NodeRuntimeHandle {
  rt: NodeRuntime;
  /** Hands an incoming message to the system. */
  deliver(frame: MsgFrame): void;
  setSkew(offsetMs: number): void;
  /** The system's exposed state, or null before it exposed any. */
  state(): Json;
  /** Records an exception that escaped system code as an error event. */
  reportCrash(err: unknown): void;
}

type Level = NonNullable<RuntimeEvent['level']>;

export function createNodeRuntime(opts: NodeRuntimeOptions): NodeRuntimeHandle {
  const { id, host, srcRoot } = opts;
  const clock = new VectorClockTracker(id, opts.vcStart);
  const random = seededRandom(opts.seed, 'node', id, String(opts.incarnation));
  const handlers: Array<(msg: Incoming) => void> = [];
  // Message ids must stay unique across restarts, whose send counters start over.
  const msgIdPrefix = opts.incarnation === 0 ? id : `${id}#${opts.incarnation}`;
  let sent = 0;
  let skewMs = 0;
  let stateFn: (() => Json) | undefined;

  const emitLog = (level: Level, msg: string, fields: Fields | undefined, src: RuntimeEvent['src']): void => {
    // Members set one by one in the order the spreads gave them: no temporary objects on a path taken per log call.
    const event: RuntimeEvent = { ts: host.eventTime(), node: id, kind: 'log', level, msg, vc: clock.tick() };
    if (src) event.src = src;
    if (fields) event.fields = fields;
    host.emit(event);
  };

  const logAt = (level: Level): ((msg: string, fields?: Fields) => void) => {
    const log = (msg: string, fields?: Fields): void => emitLog(level, msg, fields, callerLocation(log, srcRoot));
    return log;
  };
  const log: Logger = { debug: logAt('debug'), info: logAt('info'), warn: logAt('warn'), error: logAt('error') };

  const rt: NodeRuntime = {
    id,
    nodes: opts.nodes,
    config: opts.config,
    send(to, type, body) {
      // Systems are plain JavaScript: catch a bad destination here, where the stack points at the caller.
      if (typeof to !== 'string' || to.length === 0) throw new TypeError(`rt.send: destination must be an endpoint name, got ${String(to)}`);
      if (typeof type !== 'string' || type.length === 0) throw new TypeError(`rt.send: message type must be a non-empty string, got ${String(type)}`);
      const msgId = `${msgIdPrefix}:${++sent}`;
      const vc = clock.tick();
      host.emit({ ts: host.eventTime(), node: id, kind: 'send', msg: type, msgId, peer: to, vc, fields: { body } });
      host.transmit({ t: 'msg', msgId, from: id, to, type, body, vc });
    },
    onMessage(handler) {
      handlers.push(handler);
    },
    setTimer: (ms, fn) => host.setTimer(ms, fn),
    now: () => host.wallClockMs() + skewMs,
    random,
    disk: new BufferedDisk(host.store),
    log,
    exposeState(fn) {
      stateFn = fn;
    },
  };

  return {
    rt,
    deliver(frame) {
      const vc = clock.receive(frame.vc ?? {});
      host.emit({ ts: host.eventTime(), node: id, kind: 'recv', msg: frame.type, msgId: frame.msgId, peer: frame.from, vc, fields: { body: frame.body } });
      if (handlers.length === 0) {
        emitLog('warn', `no message handler registered; ${frame.type} from ${frame.from} ignored`, undefined, undefined);
      }
      const incoming: Incoming = { type: frame.type, body: frame.body, from: frame.from, msgId: frame.msgId };
      for (const handler of handlers) handler(incoming);
    },
    setSkew(offsetMs) {
      skewMs = offsetMs;
    },
    state: () => (stateFn === undefined ? null : stateFn()),
    reportCrash(err) {
      const error = err instanceof Error ? err : new Error(String(err));
      emitLog('error', `uncaught exception: ${error.message}`, { stack: error.stack ?? error.message }, errorLocation(error.stack, srcRoot));
    },
  };
}
