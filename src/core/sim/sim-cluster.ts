import path from 'node:path';
import { format } from 'node:util';
import type { Event } from '../events/event';
import { ClientRegistry } from '../cluster/client-registry';
import { deferred, type Deferred } from '../cluster/deferred';
import { checkClusterMembers } from '../cluster/endpoint-names';
import { linkFaultFields } from '../cluster/fault-table';
import type { Cluster, ClusterClient, LinkFault, NodeInfo, NodeStatus } from '../cluster/types';
import type { ScenarioClock } from '../scenario/context';
import { createNodeRuntime, type NodeRuntimeHandle, type RuntimeHost } from '../../runtime/node-runtime';
import type { RuntimeEvent } from '../../runtime/runtime-event';
import type { Json, SystemModule, TimerHandle } from '../../runtime/types';
import type { MsgFrame } from '../../runtime/wire';
import { DecisionSource, type Decision } from './decisions';
import { SimEventLog } from './event-log';
import { MemoryStore } from './memory-store';
import { SimNetwork, type Packet } from './network';
import { SIM_EPOCH_MS, SimOptions, type SimOptionsInput } from './options';
import { Scheduler, type RunEnd } from './scheduler';
import { SimClient } from './sim-client';

export interface SimClusterOptions {
  system: SystemModule;
  /** The system's source folder; log source locations are relative to it. */
  sourceDir: string;
  nodes: string[];
  /** Per-node configuration passed to the system (rt.config). */
  config: Record<string, Json>;
  seed: number;
  sim?: SimOptionsInput;
  /** Which scheduler draws keep their seeded value (see DecisionSource); all by default. */
  keep?: ReadonlySet<number>;
  /** Record every scheduler decision, for shrinking and reports. */
  record?: boolean;
  /** Where a replay writes its files; a seed search has none. */
  runDir?: string;
}

/** How driving a piece of harness work on virtual time ended. */
export type DriveResult<T> = { end: 'done'; value: T } | { end: 'failed'; error: unknown } | { end: Exclude<RunEnd, 'done'> };

type Phase = 'starting' | 'running' | 'stopped' | 'exited';

interface SimNode {
  id: string;
  phase: Phase;
  paused: boolean;
  /** Bumped when the node dies: timers and boots of an earlier life never run. */
  life: number;
  spawns: number;
  handle?: NodeRuntimeHandle;
  /** The node's synced files; they survive its crashes. */
  store: MemoryStore;
  /** Highest own vector-clock counter seen, where a restarted node resumes. */
  vcMax: number;
  skewMs: number;
  /** Work that came due while the node was paused, in order. */
  parked: Array<() => void>;
  ready?: Deferred;
  exitCode?: number | null;
  /** Stand-ins for console while the node's code runs. */
  printers?: { out: (...args: unknown[]) => void; err: (...args: unknown[]) => void };
}

/** A body on its way through the runtime: the object the system holds, its JSON, and the copy events show. */
interface InTransit {
  body: unknown;
  wire: string;
  shown: Json;
}

/** Node's setTimeout clamps delays outside [1, 2^31 - 1] ms to 1 ms; systems see the same here. */
const TIMEOUT_MAX_MS = 2 ** 31 - 1;

/** What the events show: the data as it was when emitted, as the live host's JSON line holds it. */
function snapshot<T>(value: T): T {
  return JSON.parse(JSON.stringify(value) ?? 'null') as T;
}

/**
 * The simulated backend: every node of the system in this process, each a
 * `createNodeRuntime` on a simulated host, and one seeded scheduler on virtual time
 * deciding every delivery, timer and fault. Nothing depends on the wall clock, pids
 * or ports, so a seed (with its schedule) gives the same events byte for byte.
 */
export class SimCluster implements Cluster {
  readonly runDir: string;
  readonly options: SimOptions;
  private readonly log = new SimEventLog();
  private readonly scheduler: Scheduler;
  private readonly decisions: DecisionSource;
  private readonly network: SimNetwork;
  private readonly slots = new Map<string, SimNode>();
  private readonly clients: ClientRegistry<SimClient>;
  private readonly srcRoot: string;
  private phase: 'new' | 'running' | 'stopped' = 'new';
  private sending: InTransit | undefined;
  private delivering: { body: Json; shown: Json } | undefined;

  /** The scenario's clock: its sleeps and wait timeouts on virtual time. */
  readonly clock: ScenarioClock = {
    setTimer: (ms, fn) =>
      this.scheduler.after(Math.round(Math.max(0, ms) * 1000), () => {
        fn();
        this.scheduler.wake();
      }),
  };

  constructor(private readonly opts: SimClusterOptions) {
    checkClusterMembers(opts.nodes, opts.seed);
    this.options = SimOptions.parse(opts.sim ?? {});
    this.runDir = opts.runDir ?? '';
    this.srcRoot = path.resolve(opts.sourceDir);
    this.scheduler = new Scheduler(this.options.maxSteps);
    this.decisions = new DecisionSource(opts.seed, { keep: opts.keep, record: opts.record, now: () => this.scheduler.now() });
    this.network = new SimNetwork(
      { scheduler: this.scheduler, decisions: this.decisions, emit: (e) => this.log.add(e), arrive: (p) => this.arrive(p) },
      { latencyUs: this.options.latencyUs, reorderHoldMs: this.options.reorderHoldMs },
    );
    for (const id of opts.nodes) this.slots.set(id, { id, phase: 'stopped', paused: false, life: 0, spawns: 0, store: new MemoryStore(), vcMax: 0, skewMs: 0, parked: [] });
    this.clients = new ClientRegistry(opts.nodes);
  }

  nodes(): NodeInfo[] {
    return [...this.slots.values()].map((s) => ({ id: s.id, status: statusOf(s), ...(s.exitCode !== undefined && { exitCode: s.exitCode }) }));
  }

  /** Starts every node and runs virtual time until each is up. */
  async start(): Promise<void> {
    if (this.phase !== 'new') throw new Error(`this cluster was already started (it is ${this.phase}); create a new one`);
    this.phase = 'running';
    this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'simulation started', fields: { seed: this.opts.seed, nodes: this.opts.nodes } });
    const started = await this.drive(Promise.all([...this.slots.values()].map((s) => this.spawn(s, 'start'))), Infinity);
    if (started.end === 'done') return;
    await this.stop();
    if (started.end === 'failed') throw started.error;
    throw new Error(`the simulated cluster did not start (${started.end})`);
  }

  /**
   * Runs the simulation until `work` (harness code: a scenario) settles, or `budgetMs`
   * of virtual time pass, or nothing is left to happen.
   */
  async drive<T>(work: Promise<T>, budgetMs: number): Promise<DriveResult<T>> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    work.then(
      (value) => (outcome = { ok: true, value }),
      (error: unknown) => (outcome = { ok: false, error }),
    );
    const end = await this.scheduler.runUntil(() => outcome !== undefined, this.scheduler.now() + budgetMs * 1000);
    if (outcome === undefined) return { end: end === 'done' ? 'idle' : end };
    return outcome.ok ? { end: 'done', value: outcome.value } : { end: 'failed', error: outcome.error };
  }

  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    const wasStarted = this.phase === 'running';
    this.phase = 'stopped';
    this.clients.closeAll();
    for (const slot of this.slots.values()) {
      if (slot.phase === 'running' || slot.phase === 'starting') this.terminate(slot, 'stopped', null);
    }
    this.scheduler.stop();
    if (wasStarted) this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'cluster stopped' });
  }

  async kill(node: string): Promise<void> {
    const slot = this.slot(node);
    if (slot.phase !== 'running' && slot.phase !== 'starting') return;
    this.emitProc(node, 'kill', { incarnation: slot.spawns - 1 });
    this.terminate(slot, 'stopped', null);
  }

  async restart(node: string): Promise<void> {
    this.requireRunning('restart');
    const slot = this.slot(node);
    if (slot.phase === 'running' || slot.phase === 'starting') await this.kill(node);
    return this.spawn(slot, 'restart');
  }

  async pause(node: string): Promise<void> {
    const slot = this.liveSlot(node, 'pause');
    if (slot.paused) return;
    slot.paused = true;
    this.emitProc(node, 'pause', { incarnation: slot.spawns - 1 });
  }

  async resume(node: string): Promise<void> {
    const slot = this.liveSlot(node, 'resume');
    if (!slot.paused) return;
    slot.paused = false;
    this.emitProc(node, 'resume', { incarnation: slot.spawns - 1 });
    this.flushParked(slot);
  }

  partition(groups: string[][]): void {
    this.requireRunning('partition');
    this.network.faults.partition(groups);
    this.emitFault('harness', 'partition', { groups });
  }

  heal(): void {
    this.requireRunning('heal');
    this.network.faults.heal();
    this.emitFault('harness', 'heal', {});
  }

  addLinkFault(fault: LinkFault): void {
    this.requireRunning('add a link fault');
    this.network.faults.addLinkFault(fault);
    this.emitFault('harness', 'link fault', linkFaultFields(fault));
  }

  clearLinkFaults(): void {
    this.requireRunning('clear link faults');
    this.network.faults.clearLinkFaults();
    this.emitFault('harness', 'clear link faults', {});
  }

  skewClock(node: string, offsetMs: number): void {
    const slot = this.slot(node);
    this.requireRunning('skew a clock');
    // Kept on the slot, so a restarted node gets it again (as the router re-sends it).
    slot.skewMs = offsetMs;
    slot.handle?.setSkew(offsetMs);
    this.emitFault(node, 'clock skew', { offsetMs });
  }

  async state(node: string): Promise<Json> {
    const slot = this.slot(node);
    const handle = slot.handle;
    if (handle === undefined || slot.phase !== 'running') throw new Error(`node ${node} has no state endpoint now (it is ${statusOf(slot)})`);
    if (slot.paused) throw new Error(`state of ${node} (the node is paused): no answer`);
    try {
      return snapshot(handle.state());
    } catch (err) {
      throw new Error(`state of ${node}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async client(name: string): Promise<ClusterClient> {
    this.requireRunning('open a client');
    const msgIdPrefix = this.clients.reserve(name);
    const client = new SimClient({
      name,
      msgIdPrefix,
      scheduler: this.scheduler,
      send: (p) => this.network.send(p),
      emit: (e) => this.log.add(e),
      onClose: () => this.clients.release(name),
    });
    return this.clients.opened(name, client);
  }

  events(): readonly Event[] {
    return this.log.events();
  }

  onEvent(listener: (e: Event) => void): () => void {
    const unsubscribe = this.log.subscribe(listener);
    return () => {
      unsubscribe();
      // A waitFor unsubscribes as it resolves: let the scenario continue at this instant.
      this.scheduler.wake();
    };
  }

  emit(e: Omit<Event, 'id' | 'ts'> & { ts?: number }): Event {
    const { ts, ...rest } = e;
    return this.log.add({ ts: ts ?? this.now(), ...rest });
  }

  now(): number {
    return this.scheduler.now();
  }

  /** Scheduler tasks run so far. */
  get steps(): number {
    return this.scheduler.steps;
  }

  /** The scheduler's decisions so far (recorded only when the cluster was made with `record`). */
  decisionLog(): readonly Decision[] {
    return this.decisions.recorded();
  }

  get decisionCount(): number {
    return this.decisions.drawn;
  }

  // ---- nodes -------------------------------------------------------------

  private spawn(slot: SimNode, kind: 'start' | 'restart'): Promise<void> {
    const incarnation = slot.spawns++;
    const life = slot.life;
    const ready = deferred();
    slot.phase = 'starting';
    slot.exitCode = undefined;
    slot.ready = ready;
    this.emitProc(slot.id, kind, { incarnation });
    const [min, max] = this.options.spawnDelayUs;
    const delay = this.decisions.uniform('spawn-delay', min, max, () => `${slot.id} ${kind}`);
    this.scheduler.after(delay, () => this.onNode(slot, life, () => this.boot(slot, incarnation)));
    return ready.promise;
  }

  private boot(slot: SimNode, incarnation: number): void {
    const handle = createNodeRuntime({
      id: slot.id,
      nodes: this.opts.nodes,
      config: this.opts.config,
      seed: this.opts.seed,
      srcRoot: this.srcRoot,
      incarnation,
      vcStart: slot.vcMax,
      host: this.hostFor(slot, slot.life),
    });
    if (slot.skewMs !== 0) handle.setSkew(slot.skewMs);
    slot.handle = handle;
    slot.phase = 'running';
    // As live, the node counts as connected before its code starts; a crash in start() is an exit after that.
    slot.ready?.resolve();
    slot.ready = undefined;
    this.scheduler.wake();
    this.guard(slot, () => this.opts.system.createNode(handle.rt).start());
  }

  private hostFor(slot: SimNode, life: number): RuntimeHost {
    return {
      wallClockMs: () => SIM_EPOCH_MS + Math.floor(this.scheduler.now() / 1000),
      eventTime: () => this.scheduler.now(),
      setTimer: (ms, fn) => this.nodeTimer(slot, life, ms, fn),
      transmit: (frame) => this.network.send(this.packetOf(frame)),
      emit: (e) => this.nodeEvent(slot, e),
      store: slot.store,
    };
  }

  private nodeTimer(slot: SimNode, life: number, ms: number, fn: () => void): TimerHandle {
    const delayMs = ms >= 1 && ms <= TIMEOUT_MAX_MS ? ms : 1;
    const jitterMax = this.options.timerJitterUs;
    const jitter = jitterMax > 0 ? this.decisions.uniform('timer-jitter', 0, jitterMax, () => `${slot.id} timer ${ms} ms`) : 0;
    return this.scheduler.after(Math.round(delayMs * 1000) + jitter, () => this.onNode(slot, life, () => this.guard(slot, fn)));
  }

  /** Runs node work unless the node died since it was scheduled; parks it while the node is paused. */
  private onNode(slot: SimNode, life: number, work: () => void): void {
    if (slot.life !== life) return;
    if (slot.paused) {
      slot.parked.push(() => this.onNode(slot, life, work));
      return;
    }
    work();
  }

  /**
   * Runs system code; an exception that escapes it crashes the node, as it would the
   * process. What the code prints bypassing rt.log becomes the node's log events, as
   * live (stdout lines at info, stderr lines at error).
   */
  private guard(slot: SimNode, work: () => void): void {
    const { log, info, debug, warn, error } = console;
    const printers = (slot.printers ??= { out: this.printer(slot, 'info'), err: this.printer(slot, 'error') });
    console.log = console.info = console.debug = printers.out;
    console.warn = console.error = printers.err;
    try {
      work();
    } catch (err) {
      slot.handle?.reportCrash(err);
      this.terminate(slot, 'exited', 1);
    } finally {
      console.log = log;
      console.info = info;
      console.debug = debug;
      console.warn = warn;
      console.error = error;
    }
  }

  private printer(slot: SimNode, level: 'info' | 'error'): (...args: unknown[]) => void {
    return (...args) => {
      for (const line of format(...args).split('\n')) this.log.add({ ts: this.now(), node: slot.id, kind: 'log', level, msg: line });
    };
  }

  /** The node's process is gone: volatile state and unsynced writes with it; its store stays. */
  private terminate(slot: SimNode, phase: 'stopped' | 'exited', code: number | null): void {
    slot.life++;
    slot.handle = undefined;
    slot.phase = phase;
    slot.paused = false;
    slot.exitCode = code;
    this.log.add({
      ts: this.now(),
      node: slot.id,
      kind: 'proc',
      level: phase === 'exited' ? 'error' : 'info',
      msg: 'exit',
      fields: { incarnation: slot.spawns - 1, code, signal: code === null ? 'SIGKILL' : null },
    });
    slot.ready?.reject(new Error(`node ${slot.id} exited before it started`));
    slot.ready = undefined;
    // Parked deliveries now find nobody (and say so); parked timers belong to the dead life.
    this.flushParked(slot);
  }

  private flushParked(slot: SimNode): void {
    const parked = slot.parked;
    slot.parked = [];
    for (const work of parked) this.scheduler.after(0, work);
  }

  // ---- messages and events -------------------------------------------------

  /** The runtime emits a send event, then transmits the same body: serialise it once for both. */
  private packetOf(frame: MsgFrame): Packet {
    const sending = this.sending !== undefined && this.sending.body === frame.body ? this.sending : this.inTransit(frame.body);
    this.sending = undefined;
    const packet: Packet = { msgId: frame.msgId, from: frame.from, to: frame.to, type: frame.type, wire: sending.wire, shown: sending.shown };
    if (frame.vc) packet.vc = frame.vc;
    return packet;
  }

  private inTransit(body: unknown): InTransit {
    const wire = JSON.stringify(body) ?? 'null';
    return { body, wire, shown: JSON.parse(wire) as Json };
  }

  private arrive(packet: Packet): void {
    const slot = this.slots.get(packet.to);
    if (slot !== undefined) {
      this.arriveAtNode(slot, packet);
      return;
    }
    const client = this.clients.get(packet.to);
    if (client === undefined) this.network.unreachable(packet);
    else client.receive(frameOf(packet), packet.shown);
  }

  private arriveAtNode(slot: SimNode, packet: Packet): void {
    const handle = slot.handle;
    if (handle === undefined) {
      this.network.unreachable(packet);
      return;
    }
    if (slot.paused) {
      slot.parked.push(() => this.arriveAtNode(slot, packet));
      return;
    }
    const frame = frameOf(packet);
    this.delivering = { body: frame.body, shown: packet.shown };
    this.guard(slot, () => handle.deliver(frame));
    this.delivering = undefined;
  }

  private nodeEvent(slot: SimNode, e: RuntimeEvent): void {
    const own = e.vc[slot.id];
    if (own !== undefined && own > slot.vcMax) slot.vcMax = own;
    const fields = e.fields;
    if (fields === undefined) {
      this.log.add(e);
      return;
    }
    // Send and receive events carry only the body, whose JSON the message has anyway.
    if (e.kind === 'send') {
      this.sending = this.inTransit(fields.body);
      this.log.add(e, { body: this.sending.shown });
    } else if (e.kind === 'recv' && this.delivering !== undefined && fields.body === this.delivering.body) {
      this.log.add(e, { body: this.delivering.shown });
    } else {
      this.log.add(e, snapshot(fields));
    }
  }

  // ---- helpers ---------------------------------------------------------------

  private slot(node: string): SimNode {
    const slot = this.slots.get(node);
    if (slot === undefined) throw new Error(`unknown node ${node}; the nodes are ${this.opts.nodes.join(', ')}`);
    return slot;
  }

  private liveSlot(node: string, action: string): SimNode {
    const slot = this.slot(node);
    if (slot.phase !== 'running' && slot.phase !== 'starting') throw new Error(`cannot ${action} node ${node}: it is ${statusOf(slot)}`);
    return slot;
  }

  private requireRunning(action: string): void {
    if (this.phase !== 'running') throw new Error(`cannot ${action}: the cluster is ${this.phase === 'new' ? 'not started' : 'stopped'}`);
  }

  private emitProc(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'proc', level: 'info', msg, fields });
  }

  private emitFault(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'fault', level: 'warn', msg, fields });
  }
}

function statusOf(slot: SimNode): NodeStatus {
  return slot.paused ? 'paused' : slot.phase;
}

function frameOf(packet: Packet): MsgFrame {
  const frame: MsgFrame = { t: 'msg', msgId: packet.msgId, from: packet.from, to: packet.to, type: packet.type, body: JSON.parse(packet.wire) as Json };
  if (packet.vc) frame.vc = packet.vc;
  return frame;
}
