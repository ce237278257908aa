import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Event, EventInput } from '../events/event';
import type { Json } from '../../runtime/types';
import { ClientRegistry } from './client-registry';
import { RouterClient } from './cluster-client';
import { deferred, type Deferred } from './deferred';
import { checkClusterMembers } from './endpoint-names';
import { EventLog } from './event-log';
import { linkFaultFields } from './fault-table';
import { describeExit, type NodeExit } from './node-output';
import { getJson } from './ports';
import { Router, type EndpointInfo } from './router';
import type { BackendName, Cluster, ClusterClient, ClusterOptions, LinkFault, NodeInfo, NodeStatus } from './types';

/**
 * What every live backend (processes, containers) shares: the router and its faults,
 * clients, the event log, readiness, and the node lifecycle bookkeeping. A backend
 * says how to prepare the run, launch one incarnation of a node, kill, pause and resume
 * it, and clean up.
 */

export interface LiveClusterOptions extends ClusterOptions {
  /** How long start() and restart() wait for nodes to connect to the router. */
  startTimeoutMs?: number;
}

/** One incarnation of a node, as a backend launched it. */
export interface LaunchedNode {
  /** Resolves once the node is gone and its output was fully read. */
  closed: Promise<NodeExit>;
  /** What NodeInfo shows about it (pid, container, ports). */
  info: Pick<NodeInfo, 'pid' | 'container' | 'inspectPort'>;
  /** Who it is in the timeline's kill, pause, resume and exit events (pid or container). */
  fields: Record<string, Json>;
  /** What the start and restart events add (ports). */
  startFields: Record<string, Json>;
}

export interface NodeSlot<H extends LaunchedNode> {
  readonly id: string;
  readonly dataDir: string;
  status: NodeStatus;
  node?: H;
  statePort?: number;
  exitCode?: number | null;
  /** Incarnations launched so far; the current one is spawns - 1. */
  spawns: number;
  /** Highest own vector-clock counter seen, where a restarted node resumes. */
  vcMax: number;
  /** Set while the harness is killing the node, so its exit is not reported as a crash. */
  killing: boolean;
  ready?: Deferred;
  /** A hello that came before its launch returned (a container can connect before it is inspected). */
  earlyHello?: EndpointInfo;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const STATE_TIMEOUT_MS = 5_000;

type Phase = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

export abstract class LiveCluster<H extends LaunchedNode> implements Cluster {
  abstract readonly backend: BackendName;
  readonly runDir: string;
  protected readonly log = new EventLog();
  protected readonly t0Ms = performance.timeOrigin + performance.now();
  protected readonly slots = new Map<string, NodeSlot<H>>();
  private readonly clients: ClientRegistry<RouterClient>;
  /** Launches under way; stop() waits for them so no node escapes it. */
  private readonly launching = new Set<Promise<unknown>>();
  private phase: Phase = 'new';
  private router?: Router;
  private stopping?: Promise<void>;

  constructor(protected readonly opts: LiveClusterOptions) {
    checkClusterMembers(opts.nodes, opts.seed);
    for (const id of opts.nodes) this.slots.set(id, { id, dataDir: path.resolve(opts.runDir, 'data', id), status: 'stopped', spawns: 0, vcMax: 0, killing: false });
    this.clients = new ClientRegistry(opts.nodes);
    this.runDir = opts.runDir;
  }

  /** Sets up what the run needs before the router exists (reaping, images, networks). */
  protected abstract prepare(): Promise<void>;
  /** The address the router listens on, which every node must be able to reach. */
  protected abstract routerHost(): string;
  /** Starts one incarnation of a node with the live host's environment. */
  protected abstract launch(slot: NodeSlot<H>, env: Record<string, string>, incarnation: number): Promise<H>;
  /** Ends a node at once; `closed` resolves after. */
  protected abstract forceKill(node: H): Promise<void>;
  /** Resolves once the node is frozen. */
  protected abstract freeze(node: H): Promise<void>;
  protected abstract thaw(node: H): Promise<void>;
  /** Undoes prepare() once every node is gone and the router closed. */
  protected abstract cleanUp(): Promise<void>;

  /** Called once the router listens on its TCP port, for backends whose nodes reach it another way. */
  protected async routerListening(_router: Router): Promise<void> {}

  /** The host port where the harness reaches a node's state endpoint, given the port it reported. */
  protected hostStatePort(_node: H, reported: number | undefined): number | undefined {
    return reported;
  }

  /** Called once for every incarnation that ended, before the exit is recorded. */
  protected onNodeGone(_node: H): void {}

  nodes(): NodeInfo[] {
    return [...this.slots.values()].map((s) => ({
      id: s.id,
      status: s.status,
      ...(s.node?.info.pid !== undefined && { pid: s.node.info.pid }),
      ...(s.node?.info.container !== undefined && { container: s.node.info.container }),
      ...(s.statePort !== undefined && { statePort: s.statePort }),
      ...(s.node?.info.inspectPort !== undefined && { inspectPort: s.node.info.inspectPort }),
      ...(s.exitCode !== undefined && { exitCode: s.exitCode }),
    }));
  }

  async start(): Promise<void> {
    if (this.phase !== 'new') throw new Error(`this cluster was already started (it is ${this.phase}); create a new one`);
    this.phase = 'starting';
    try {
      fs.mkdirSync(this.runDir, { recursive: true });
      this.log.open(path.join(this.runDir, 'events.jsonl'));
      await this.prepare();
      const router = new Router({
        seed: this.opts.seed,
        now: () => this.now(),
        emit: (e) => this.log.add(e),
        recordFile: path.join(this.runDir, 'router.jsonl'),
      });
      this.router = router;
      router.onHello((info) => this.onHello(info));
      const port = await router.listen(this.routerHost());
      await this.routerListening(router);
      this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'router listening', fields: { port, runDir: this.runDir, backend: this.backend } });
      const slots = [...this.slots.values()];
      await Promise.all(slots.map((slot) => this.spawn(slot, 'start')));
      await this.awaitReady(slots);
      this.phase = 'running';
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  async kill(node: string): Promise<void> {
    const slot = this.slot(node);
    const current = slot.node;
    if (current === undefined) return;
    slot.killing = true;
    this.emitProc(node, 'kill', current.fields);
    await this.forceKill(current);
    await current.closed;
  }

  async restart(node: string): Promise<void> {
    this.requireRunning('restart');
    const slot = this.slot(node);
    if (slot.node !== undefined) await this.kill(node);
    await this.spawn(slot, 'restart');
    await this.awaitReady([slot]);
  }

  async pause(node: string): Promise<void> {
    const slot = this.slot(node);
    const current = this.liveNode(slot, 'pause');
    if (slot.status === 'paused') return;
    await this.freeze(current);
    slot.status = 'paused';
    this.emitProc(node, 'pause', current.fields);
  }

  async resume(node: string): Promise<void> {
    const slot = this.slot(node);
    const current = this.liveNode(slot, 'resume');
    if (slot.status !== 'paused') return;
    await this.thaw(current);
    slot.status = slot.statePort === undefined ? 'starting' : 'running';
    this.emitProc(node, 'resume', current.fields);
  }

  partition(groups: string[][]): void {
    this.requireRouter('partition').faults.partition(groups);
    this.emitFault('harness', 'partition', { groups });
  }

  heal(): void {
    this.requireRouter('heal').faults.heal();
    this.emitFault('harness', 'heal', {});
  }

  addLinkFault(fault: LinkFault): void {
    this.requireRouter('add a link fault').faults.addLinkFault(fault);
    this.emitFault('harness', 'link fault', linkFaultFields(fault));
  }

  clearLinkFaults(): void {
    this.requireRouter('clear link faults').faults.clearLinkFaults();
    this.emitFault('harness', 'clear link faults', {});
  }

  skewClock(node: string, offsetMs: number): void {
    this.slot(node);
    this.requireRouter('skew a clock').setSkew(node, offsetMs);
    this.emitFault(node, 'clock skew', { offsetMs });
  }

  async state(node: string): Promise<Json> {
    const slot = this.slot(node);
    if (slot.statePort === undefined) throw new Error(`node ${node} has no state endpoint now (it is ${slot.status})`);
    try {
      return await getJson(slot.statePort, '/state', STATE_TIMEOUT_MS);
    } catch (err) {
      const hint = slot.status === 'paused' ? ' (the node is paused)' : '';
      throw new Error(`state of ${node}${hint}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async client(name: string): Promise<ClusterClient> {
    const router = this.requireRouter('open a client');
    const msgIdPrefix = this.clients.reserve(name);
    try {
      const client = await RouterClient.connect({
        name,
        routerHost: this.routerHost(),
        routerPort: router.port,
        msgIdPrefix,
        now: () => this.now(),
        emit: (e) => this.log.add(e),
        onClose: () => this.clients.release(name),
      });
      return this.clients.opened(name, client);
    } catch (err) {
      this.clients.release(name);
      throw err;
    }
  }

  events(): readonly Event[] {
    return this.log.events();
  }

  onEvent(listener: (e: Event) => void): () => void {
    return this.log.subscribe(listener);
  }

  emit(e: Omit<Event, 'id' | 'ts'> & { ts?: number }): Event {
    const { ts, ...rest } = e;
    return this.log.add({ ts: ts ?? this.now(), ...rest });
  }

  now(): number {
    return Math.round((performance.timeOrigin + performance.now() - this.t0Ms) * 1000);
  }

  protected isStopping(): boolean {
    return this.phase === 'stopping' || this.phase === 'stopped';
  }

  protected requireRunning(action: string): void {
    if (this.phase !== 'running') throw new Error(`cannot ${action}: the cluster is ${this.phase}`);
  }

  protected slot(node: string): NodeSlot<H> {
    const slot = this.slots.get(node);
    if (slot === undefined) throw new Error(`unknown node ${node}; the nodes are ${this.opts.nodes.join(', ')}`);
    return slot;
  }

  protected liveNode(slot: NodeSlot<H>, action: string): H {
    if (slot.node === undefined) throw new Error(`cannot ${action} node ${slot.id}: it is ${slot.status}`);
    return slot.node;
  }

  protected emitProc(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'proc', level: 'info', msg, fields });
  }

  protected emitFault(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'fault', level: 'warn', msg, fields });
  }

  /** Adds a node's own event, remembering its vector clock so a restart resumes it. */
  protected onNodeEvent(slot: NodeSlot<H>, e: EventInput): void {
    const own = e.vc?.[slot.id];
    if (own !== undefined && own > slot.vcMax) slot.vcMax = own;
    this.log.add(e);
  }

  /** The live host's environment for one incarnation (see runtime/host-env.ts). */
  private hostEnv(slot: NodeSlot<H>, incarnation: number, routerPort: number): Record<string, string> {
    return {
      ...this.opts.env,
      DDBENCH_NODE_ID: slot.id,
      DDBENCH_NODES: this.opts.nodes.join(','),
      DDBENCH_ROUTER: `${this.routerHost()}:${routerPort}`,
      DDBENCH_ENTRY: path.resolve(this.opts.sourceDir, this.opts.entry),
      DDBENCH_CONFIG: JSON.stringify(this.opts.config),
      DDBENCH_DATA_DIR: slot.dataDir,
      DDBENCH_SEED: String(this.opts.seed),
      DDBENCH_T0: String(this.t0Ms),
      DDBENCH_SRC_ROOT: path.resolve(this.opts.sourceDir),
      DDBENCH_INCARNATION: String(incarnation),
      DDBENCH_VC_START: String(slot.vcMax),
    };
  }

  private async spawn(slot: NodeSlot<H>, kind: 'start' | 'restart'): Promise<void> {
    const router = this.router;
    if (this.isStopping() || router === undefined) throw new Error(`cannot ${kind} node ${slot.id}: the cluster is stopped`);
    const incarnation = slot.spawns++;
    fs.mkdirSync(slot.dataDir, { recursive: true });
    slot.earlyHello = undefined;
    const launch = this.launch(slot, this.hostEnv(slot, incarnation, router.port), incarnation).then((node) => {
      slot.node = node;
      slot.status = 'starting';
      slot.killing = false;
      slot.ready = deferred();
      slot.statePort = undefined;
      slot.exitCode = undefined;
      this.emitProc(slot.id, kind, { ...node.fields, incarnation, ...node.startFields });
      void node.closed.then((exit) => this.onExit(slot, node, exit));
      const early = slot.earlyHello;
      slot.earlyHello = undefined;
      if (early !== undefined) this.onHello(early);
    });
    this.launching.add(launch);
    try {
      await launch;
    } finally {
      this.launching.delete(launch);
    }
  }

  /** Resolves when every slot's node said hello; rejects at the first that exited, or at the timeout. */
  private async awaitReady(slots: NodeSlot<H>[]): Promise<void> {
    const timeoutMs = this.opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = slots.filter((s) => s.status === 'starting').map((s) => s.id);
        reject(new Error(`nodes did not connect to the router within ${timeoutMs} ms: ${missing.join(', ')}; their output is in ${path.join(this.runDir, 'events.jsonl')}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([Promise.all(slots.map((s) => s.ready?.promise)), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private onHello(info: EndpointInfo): void {
    if (info.role !== 'node') return;
    const slot = this.slots.get(info.node);
    // A hello from an earlier incarnation is stale; pids mean nothing inside a sandbox or container.
    if (slot === undefined || info.incarnation !== slot.spawns - 1) return;
    if (slot.node === undefined) {
      // This incarnation is still being launched; its hello counts once the launch returns.
      slot.earlyHello = info;
      return;
    }
    slot.statePort = this.hostStatePort(slot.node, info.statePort);
    if (slot.status === 'starting') slot.status = 'running';
    slot.ready?.resolve();
  }

  private onExit(slot: NodeSlot<H>, node: H, exit: NodeExit): void {
    this.onNodeGone(node);
    if (slot.node !== node) return;
    const crashed = !slot.killing;
    slot.node = undefined;
    slot.statePort = undefined;
    slot.exitCode = exit.code;
    slot.status = crashed ? 'exited' : 'stopped';
    this.log.add({
      ts: this.now(),
      node: slot.id,
      kind: 'proc',
      level: crashed && exit.code !== 0 ? 'error' : 'info',
      msg: 'exit',
      fields: { ...node.fields, code: exit.code, signal: exit.signal },
    });
    slot.ready?.reject(new Error(`node ${slot.id} exited before connecting to the router (${describeExit(exit)})`));
  }

  private async shutdown(): Promise<void> {
    const wasStarted = this.phase !== 'new';
    this.phase = 'stopping';
    this.clients.closeAll();
    await Promise.allSettled([...this.launching]);
    const nodes: H[] = [];
    for (const slot of this.slots.values()) {
      if (slot.node === undefined) continue;
      slot.killing = true;
      nodes.push(slot.node);
    }
    await Promise.all(nodes.map(async (n) => {
      await this.forceKill(n);
      await n.closed;
    }));
    await this.router?.close();
    try {
      await this.cleanUp();
    } finally {
      if (wasStarted) this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'cluster stopped' });
      await this.log.close();
      this.phase = 'stopped';
    }
  }

  private requireRouter(action: string): Router {
    this.requireRunning(action);
    if (this.router === undefined) throw new Error(`cannot ${action}: the cluster has no router`);
    return this.router;
  }
}
