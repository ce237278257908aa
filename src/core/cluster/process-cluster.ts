import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Event, EventInput } from '../events/event';
import type { Json } from '../../runtime/types';
import { RouterClient } from './cluster-client';
import { EventLog } from './event-log';
import { locateLiveHost } from './live-host-path';
import { spawnNodeProcess, type NodeExit, type NodeProcess } from './node-process';
import { freePort, getJson } from './ports';
import { reapLeftovers, RunRegistry, signalGroup } from './process-registry';
import { Router, type EndpointInfo } from './router';
import type { Cluster, ClusterClient, ClusterOptions, LinkFault, NodeInfo, NodeStatus } from './types';

export interface ProcessClusterOptions extends ClusterOptions {
  /** How long start() and restart() wait for nodes to connect to the router. */
  startTimeoutMs?: number;
  /** The built live host; by default found in the package (locateLiveHost). */
  liveHostPath?: string;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const STATE_TIMEOUT_MS = 5_000;
/** Endpoint names the timeline uses for itself. */
const RESERVED_NAMES = new Set(['router', 'harness']);
const ENDPOINT_NAME = /^[A-Za-z0-9_.-]+$/;

interface Waiter {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function waiter(): Waiter {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting when a node dies; that must not become an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

interface NodeSlot {
  id: string;
  dataDir: string;
  status: NodeStatus;
  proc?: NodeProcess;
  statePort?: number;
  inspectPort?: number;
  exitCode?: number | null;
  /** Processes spawned so far for this node. */
  spawns: number;
  /** Highest own vector-clock counter seen, where a restarted process resumes. */
  vcMax: number;
  /** Set while the harness is killing the process, so its exit is not reported as a crash. */
  killing: boolean;
  ready?: Waiter;
}

type Phase = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

function checkEndpointName(name: string, what: string): void {
  if (!ENDPOINT_NAME.test(name)) throw new Error(`${what} ${JSON.stringify(name)} must use only letters, digits, '_', '.' and '-'`);
  if (RESERVED_NAMES.has(name)) throw new Error(`${what} ${JSON.stringify(name)} is reserved for the timeline`);
}

function describeExit(exit: NodeExit): string {
  const how = exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
  return exit.stderrTail.length === 0 ? how : `${how}; its last stderr lines:\n${exit.stderrTail.join('\n')}`;
}

/** Resolves once `pid` is stopped (SIGSTOP took effect), where /proc can tell; otherwise at once. */
async function waitUntilStopped(pid: number): Promise<void> {
  const statFile = `/proc/${pid}/stat`;
  for (;;) {
    let stat: string;
    try {
      stat = fs.readFileSync(statFile, 'utf8');
    } catch {
      return; // no procfs, or the process is gone
    }
    // The state letter follows the parenthesised command name, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'T' || state === 't') return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * The default backend: every node is a live host child process leading its own
 * process group; all traffic goes through the router. See process-registry.ts for
 * how no process outlives the run.
 */
export class ProcessCluster implements Cluster {
  readonly runDir: string;
  private readonly log = new EventLog();
  private readonly t0Ms = performance.timeOrigin + performance.now();
  private readonly slots = new Map<string, NodeSlot>();
  private readonly clients = new Map<string, RouterClient | undefined>();
  private readonly clientOpens = new Map<string, number>();
  private readonly runId: string;
  private phase: Phase = 'new';
  private router?: Router;
  private registry?: RunRegistry;
  private hostPath?: string;
  private stopping?: Promise<void>;

  constructor(private readonly opts: ProcessClusterOptions) {
    if (opts.nodes.length === 0) throw new Error('a cluster needs at least one node');
    if (!Number.isInteger(opts.seed)) throw new Error(`seed must be an integer, got ${opts.seed}`);
    for (const id of opts.nodes) {
      checkEndpointName(id, 'node id');
      if (this.slots.has(id)) throw new Error(`node id ${id} is listed twice`);
      this.slots.set(id, { id, dataDir: path.join(opts.runDir, 'data', id), status: 'stopped', spawns: 0, vcMax: 0, killing: false });
    }
    this.runDir = opts.runDir;
    this.runId = `${path.basename(opts.runDir).replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  nodes(): NodeInfo[] {
    return [...this.slots.values()].map((s) => ({
      id: s.id,
      status: s.status,
      ...(s.proc && { pid: s.proc.pid }),
      ...(s.statePort !== undefined && { statePort: s.statePort }),
      ...(s.inspectPort !== undefined && { inspectPort: s.inspectPort }),
      ...(s.exitCode !== undefined && { exitCode: s.exitCode }),
    }));
  }

  async start(): Promise<void> {
    if (this.phase !== 'new') throw new Error(`this cluster was already started (it is ${this.phase}); create a new one`);
    this.phase = 'starting';
    try {
      reapLeftovers();
      this.hostPath = this.opts.liveHostPath ?? locateLiveHost();
      fs.mkdirSync(this.runDir, { recursive: true });
      this.log.open(path.join(this.runDir, 'events.jsonl'));
      const router = new Router({
        seed: this.opts.seed,
        now: () => this.now(),
        emit: (e) => this.log.add(e),
        recordFile: path.join(this.runDir, 'router.jsonl'),
      });
      this.router = router;
      router.onHello((info) => this.onHello(info));
      const port = await router.listen();
      this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'router listening', fields: { port, runDir: this.runDir } });
      this.registry = new RunRegistry(this.runId, this.runDir);
      const slots = [...this.slots.values()];
      for (const slot of slots) await this.spawn(slot, 'start');
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
    const proc = slot.proc;
    if (proc === undefined) return;
    slot.killing = true;
    this.emitProc(node, 'kill', { pid: proc.pid });
    signalGroup(proc.pid, 'SIGKILL');
    await proc.closed;
  }

  async restart(node: string): Promise<void> {
    this.requireRunning('restart');
    const slot = this.slot(node);
    if (slot.proc !== undefined) await this.kill(node);
    await this.spawn(slot, 'restart');
    await this.awaitReady([slot]);
  }

  async pause(node: string): Promise<void> {
    const slot = this.slot(node);
    const proc = this.liveProc(slot, 'pause');
    if (slot.status === 'paused') return;
    signalGroup(proc.pid, 'SIGSTOP');
    await waitUntilStopped(proc.pid);
    slot.status = 'paused';
    this.emitProc(node, 'pause', { pid: proc.pid });
  }

  async resume(node: string): Promise<void> {
    const slot = this.slot(node);
    const proc = this.liveProc(slot, 'resume');
    if (slot.status !== 'paused') return;
    signalGroup(proc.pid, 'SIGCONT');
    slot.status = slot.statePort === undefined ? 'starting' : 'running';
    this.emitProc(node, 'resume', { pid: proc.pid });
  }

  partition(groups: string[][]): void {
    this.requireRouter('partition').partition(groups);
    this.emitFault('harness', 'partition', { groups });
  }

  heal(): void {
    this.requireRouter('heal').heal();
    this.emitFault('harness', 'heal', {});
  }

  addLinkFault(fault: LinkFault): void {
    this.requireRouter('add a link fault').addLinkFault(fault);
    const { delayMs, ...rest } = fault;
    this.emitFault('harness', 'link fault', { ...rest, ...(delayMs && { delayMs: [...delayMs] }) });
  }

  clearLinkFaults(): void {
    this.requireRouter('clear link faults').clearLinkFaults();
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
    checkEndpointName(name, 'client name');
    if (this.slots.has(name)) throw new Error(`client name ${name} is a node id`);
    if (this.clients.has(name)) throw new Error(`a client named ${name} is already open; close it or pick another name`);
    const opens = this.clientOpens.get(name) ?? 0;
    this.clientOpens.set(name, opens + 1);
    this.clients.set(name, undefined);
    try {
      const client = await RouterClient.connect({
        name,
        routerPort: router.port,
        msgIdPrefix: opens === 0 ? name : `${name}#${opens}`,
        now: () => this.now(),
        emit: (e) => this.log.add(e),
        onClose: () => this.clients.delete(name),
      });
      this.clients.set(name, client);
      return client;
    } catch (err) {
      this.clients.delete(name);
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

  private async spawn(slot: NodeSlot, kind: 'start' | 'restart'): Promise<void> {
    const inspectPort = this.opts.inspect === true ? await freePort() : undefined;
    const { hostPath, router, registry } = this;
    // stop() may have run while we awaited; a process spawned now would escape it.
    if (this.phase === 'stopping' || this.phase === 'stopped' || hostPath === undefined || router === undefined || registry === undefined) {
      throw new Error(`cannot ${kind} node ${slot.id}: the cluster is stopped`);
    }
    const incarnation = slot.spawns++;
    fs.mkdirSync(slot.dataDir, { recursive: true });
    const proc = spawnNodeProcess({
      node: slot.id,
      hostPath,
      cwd: this.opts.sourceDir,
      inspectPort,
      env: {
        ...process.env,
        ...this.opts.env,
        DDBENCH_NODE_ID: slot.id,
        DDBENCH_NODES: this.opts.nodes.join(','),
        DDBENCH_ROUTER: `127.0.0.1:${router.port}`,
        DDBENCH_ENTRY: path.resolve(this.opts.sourceDir, this.opts.entry),
        DDBENCH_CONFIG: JSON.stringify(this.opts.config),
        DDBENCH_DATA_DIR: path.resolve(slot.dataDir),
        DDBENCH_SEED: String(this.opts.seed),
        DDBENCH_T0: String(this.t0Ms),
        DDBENCH_SRC_ROOT: path.resolve(this.opts.sourceDir),
        DDBENCH_INCARNATION: String(incarnation),
        DDBENCH_VC_START: String(slot.vcMax),
      },
      now: () => this.now(),
      onEvent: (e) => this.onNodeEvent(slot, e),
    });
    registry.add(proc.pid);
    slot.proc = proc;
    slot.status = 'starting';
    slot.killing = false;
    slot.ready = waiter();
    slot.inspectPort = inspectPort;
    slot.statePort = undefined;
    slot.exitCode = undefined;
    this.emitProc(slot.id, kind, { pid: proc.pid, incarnation, ...(inspectPort !== undefined && { inspectPort }) });
    void proc.closed.then((exit) => this.onExit(slot, proc, exit));
  }

  /** Resolves when every slot's process said hello; rejects at the first that exited, or at the timeout. */
  private async awaitReady(slots: NodeSlot[]): Promise<void> {
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
    // A hello from another pid is a stale or foreign process, not this slot's.
    if (slot?.proc === undefined || slot.proc.pid !== info.pid) return;
    slot.statePort = info.statePort;
    if (slot.status === 'starting') slot.status = 'running';
    slot.ready?.resolve();
  }

  private onNodeEvent(slot: NodeSlot, e: EventInput): void {
    const own = e.vc?.[slot.id];
    if (own !== undefined && own > slot.vcMax) slot.vcMax = own;
    this.log.add(e);
  }

  private onExit(slot: NodeSlot, proc: NodeProcess, exit: NodeExit): void {
    // Anything the node left in its group goes with it.
    signalGroup(proc.pid, 'SIGKILL');
    this.registry?.remove(proc.pid);
    if (slot.proc !== proc) return;
    const crashed = !slot.killing;
    slot.proc = undefined;
    slot.statePort = undefined;
    slot.exitCode = exit.code;
    slot.status = crashed ? 'exited' : 'stopped';
    this.log.add({
      ts: this.now(),
      node: slot.id,
      kind: 'proc',
      level: crashed && exit.code !== 0 ? 'error' : 'info',
      msg: 'exit',
      fields: { pid: proc.pid, code: exit.code, signal: exit.signal },
    });
    slot.ready?.reject(new Error(`node ${slot.id} exited before connecting to the router (${describeExit(exit)})`));
  }

  private async shutdown(): Promise<void> {
    const wasStarted = this.phase !== 'new';
    this.phase = 'stopping';
    for (const client of this.clients.values()) client?.close();
    const procs: NodeProcess[] = [];
    for (const slot of this.slots.values()) {
      if (slot.proc === undefined) continue;
      slot.killing = true;
      procs.push(slot.proc);
      signalGroup(slot.proc.pid, 'SIGKILL');
    }
    await Promise.all(procs.map((p) => p.closed));
    await this.router?.close();
    this.registry?.close();
    if (wasStarted) this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'cluster stopped' });
    await this.log.close();
    this.phase = 'stopped';
  }

  private slot(node: string): NodeSlot {
    const slot = this.slots.get(node);
    if (slot === undefined) throw new Error(`unknown node ${node}; the nodes are ${this.opts.nodes.join(', ')}`);
    return slot;
  }

  private liveProc(slot: NodeSlot, action: string): NodeProcess {
    if (slot.proc === undefined) throw new Error(`cannot ${action} node ${slot.id}: it is ${slot.status}`);
    return slot.proc;
  }

  private requireRunning(action: string): void {
    if (this.phase !== 'running') throw new Error(`cannot ${action}: the cluster is ${this.phase}`);
  }

  private requireRouter(action: string): Router {
    this.requireRunning(action);
    if (this.router === undefined) throw new Error(`cannot ${action}: the cluster has no router`);
    return this.router;
  }

  private emitProc(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'proc', level: 'info', msg, fields });
  }

  private emitFault(node: string, msg: string, fields: Record<string, Json>): void {
    this.emit({ node, kind: 'fault', level: 'warn', msg, fields });
  }
}
