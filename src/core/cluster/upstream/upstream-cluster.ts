import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SystemEntry } from '../../bugs/catalog';
import { defaultBugsDir } from '../../bugs/catalog';
import type { ClientOperation } from '../../bugs/manifest';
import { UserError } from '../../errors';
import type { Event, EventInput } from '../../events/event';
import { hclogEvent } from '../../events/formats/hclog';
import { natsEvent } from '../../events/formats/nats';
import { redisEvent } from '../../events/formats/redis';
import { zapEvent } from '../../events/formats/zap';
import { packageRoot } from '../../paths';
import { bwrapProgram } from '../../sandbox/isolation';
import type { Isolation } from '../../sandbox/levels';
import { bwrapSystemBinds } from '../../sandbox/sandbox';
import { buildUpstream, type UpstreamBuild } from './build';
import { natsMessage, natsRequest, natsSubject } from './nats-request';
import { RedisErrorReply, redisCommand, redisRequest, replyJson } from './redis-request';
import type { UpstreamSpec } from '../../bugs/upstream-spec';
import type { Json } from '../../../runtime/types';
import { readLines } from '../../../runtime/ndjson';
import { EventLog } from '../event-log';
import type { Cluster, ClusterClient, LinkFault, NodeInfo, NodeStatus } from '../types';
import { RunNetwork } from './run-network';

/** Where a node sees its binary and its data inside its sandbox. */
const BIN_DIR = '/opt/ddbench/bin';
const DATA_DIR = '/data';
const DEFAULT_START_TIMEOUT_MS = 30_000;
const STDERR_TAIL_LINES = 20;
const OUTPUT_GRACE_MS = 2_000;
/** The timeline's reader for each log format a system can name (`upstream.logs`). */
const LOG_READERS: Record<UpstreamSpec['logs'], (line: string, node: string, ts: number) => EventInput | undefined> = { 'zap-json': zapEvent, 'hclog-json': hclogEvent, 'nats-text': natsEvent, 'redis-text': redisEvent };

export interface UpstreamClusterOptions {
  system: SystemEntry;
  /** The folder whose src/ is the system's source (a workspace or a scratch copy). */
  sourceDir: string;
  runDir: string;
  seed: number;
  startTimeoutMs?: number;
  /** Each line a cold build prints (progress). */
  onBuildLine?(line: string): void;
  signal?: AbortSignal;
}

interface Incarnation {
  pid: number;
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderrTail: string[];
}

interface Slot {
  id: string;
  dataDir: string;
  status: NodeStatus;
  proc?: Incarnation;
  killing: boolean;
  exitCode?: number | null;
}

/**
 * A cluster of a real upstream system's binaries (bug kind `upstream`), built from the
 * code under test: each node a process in a bubblewrap sandbox (its own PID namespace and
 * mounts: the binary, its data folder, the system folders) inside the run's network
 * (run-network.ts). Faults are the process's (kill, restart, pause) and the
 * connections' (partition); there is no router, so message-level faults and clock skew
 * are refused with a reason. Log lines become events through the system's log reader.
 */
export class UpstreamCluster implements Cluster {
  readonly runDir: string;
  readonly isolation: Isolation = 'bwrap';
  private readonly spec: UpstreamSpec;
  private readonly log = new EventLog();
  private readonly t0Ms = performance.timeOrigin + performance.now();
  private readonly slots = new Map<string, Slot>();
  private net?: RunNetwork;
  private built?: UpstreamBuild;
  private netOps: Promise<void> = Promise.resolve();
  private netFailure?: Error;
  private phase: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping?: Promise<void>;
  private clientSeq = 0;

  constructor(private readonly opts: UpstreamClusterOptions) {
    const spec = opts.system.manifest.upstream;
    if (spec === undefined) throw new Error(`${opts.system.id} is not an upstream system`);
    this.spec = spec;
    this.runDir = opts.runDir;
    for (const id of opts.system.manifest.nodes) this.slots.set(id, { id, dataDir: path.resolve(opts.runDir, 'data', id), status: 'stopped', killing: false });
  }

  /** The run's network namespace, when it has one (as root). */
  get networkName(): string | undefined {
    return this.net?.netns;
  }

  /** The build the nodes run, once start() made or found it. */
  get binaryBuild(): UpstreamBuild | undefined {
    return this.built;
  }

  nodes(): NodeInfo[] {
    return [...this.slots.values()].map((s) => ({
      id: s.id,
      status: s.status,
      ...(s.proc !== undefined && { pid: s.proc.pid }),
      ...(s.exitCode !== undefined && { exitCode: s.exitCode }),
    }));
  }

  async start(): Promise<void> {
    if (this.phase !== 'new') throw new Error(`this cluster was already started (it is ${this.phase}); create a new one`);
    this.phase = 'starting';
    try {
      fs.mkdirSync(this.runDir, { recursive: true });
      this.log.open(path.join(this.runDir, 'events.jsonl'));
      if (bwrapProgram() === undefined) throw new UserError(`${this.opts.system.id} runs its real binaries in bubblewrap, which cannot run here (apt-get install bubblewrap, or \`ddbench setup upstream\`)`);
      this.built = await buildUpstream(this.opts.system.id, this.spec, path.join(this.opts.sourceDir, 'src'), { signal: this.opts.signal, onLine: this.opts.onBuildLine });
      this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'build', fields: { hash: this.built.hash.slice(0, 16), cached: this.built.cached, ms: this.built.durationMs } });
      this.net = await RunNetwork.create(this.opts.system.manifest.nodes, path.basename(this.runDir));
      this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'network ready', fields: { netns: this.net.netns ?? null, nodes: Object.fromEntries(this.net.nodes.map((n) => [n.id, n.ip])) } });
      const slots = [...this.slots.values()];
      for (const slot of slots) this.spawnNode(slot, 'start');
      await Promise.all(slots.map((slot) => this.awaitReady(slot)));
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
    this.emit({ node, kind: 'proc', level: 'info', msg: 'kill', fields: { pid: proc.pid } });
    signalGroup(proc.pid, 'SIGKILL');
    await proc.closed;
  }

  async restart(node: string): Promise<void> {
    this.requireRunning('restart');
    const slot = this.slot(node);
    if (slot.proc !== undefined) await this.kill(node);
    this.spawnNode(slot, 'restart');
    await this.awaitReady(slot);
  }

  async pause(node: string): Promise<void> {
    const slot = this.slot(node);
    const proc = this.liveProc(slot, 'pause');
    if (slot.status === 'paused') return;
    signalGroup(proc.pid, 'SIGSTOP');
    slot.status = 'paused';
    this.emit({ node, kind: 'proc', level: 'info', msg: 'pause', fields: { pid: proc.pid } });
  }

  async resume(node: string): Promise<void> {
    const slot = this.slot(node);
    const proc = this.liveProc(slot, 'resume');
    if (slot.status !== 'paused') return;
    signalGroup(proc.pid, 'SIGCONT');
    slot.status = 'running';
    this.emit({ node, kind: 'proc', level: 'info', msg: 'resume', fields: { pid: proc.pid } });
  }

  /** Applied in order with heal(); the fault event is recorded once the rules are in place. */
  partition(groups: string[][]): void {
    const net = this.requireNet('partition');
    this.queueNet(async () => {
      await net.partition(groups);
      this.emit({ node: 'harness', kind: 'fault', level: 'warn', msg: 'partition', fields: { groups, level: 'connection' } });
    });
  }

  heal(): void {
    const net = this.requireNet('heal');
    this.queueNet(async () => {
      await net.heal();
      this.emit({ node: 'harness', kind: 'fault', level: 'warn', msg: 'heal', fields: {} });
    });
  }

  /** Waits until every partition and heal asked for so far is in place. */
  async settled(): Promise<void> {
    await this.netOps;
    if (this.netFailure) throw this.netFailure;
  }

  addLinkFault(_fault: LinkFault): void {
    throw new UserError(`${this.opts.system.id} runs real binaries without DDBench's router: message-level faults (drop, delay, duplicate, reorder) are not available; use partition, kill, restart or pause`);
  }

  clearLinkFaults(): void {}

  skewClock(_node: string, _offsetMs: number): void {
    throw new UserError(`${this.opts.system.id}: clock skew is not available for real binaries yet`);
  }

  async state(node: string): Promise<Json> {
    const slot = this.slot(node);
    const base = { status: slot.status, ...(slot.proc && { pid: slot.proc.pid }) };
    const probe = this.spec.node.state;
    if (probe === undefined || slot.proc === undefined || slot.status === 'paused') return base;
    try {
      if ('redis' in probe) {
        const at = this.at(node, probe.port);
        const replies: Record<string, Json> = {};
        for (const command of probe.redis) replies[command.join(' ')] = replyJson(await redisRequest({ ...at, command, timeoutMs: 5_000 }));
        return { ...base, state: replies };
      }
      const res = await fetch(this.url(node, probe.port, probe.path), {
        method: probe.method,
        ...(probe.method === 'POST' && { headers: { 'content-type': 'application/json' }, body: '{}' }),
        signal: AbortSignal.timeout(5_000),
      });
      return { ...base, state: (await res.json()) as Json };
    } catch (err) {
      return { ...base, error: err instanceof Error ? err.message : String(err) };
    }
  }

  async client(name: string): Promise<ClusterClient> {
    this.requireRunning('connect a client');
    const ops = new Map(this.opts.system.manifest.client.map((op) => [op.type, op]));
    const emit = (e: Omit<Event, 'id' | 'ts'>) => this.emit(e);
    const url = (node: string, op: ClientOperation & { http: NonNullable<ClientOperation['http']> }) => this.url(node, op.http.port, op.http.path);
    const at = (node: string, port: string) => this.at(node, port);
    const placeholders = { ip: (node: string) => this.requireNet('reach a node').address(node).ip, port: (p: string) => this.port(p) };
    const next = () => ++this.clientSeq;
    return {
      name,
      async request(node, type, body, timeoutMs) {
        const op = ops.get(type);
        if (op?.http === undefined && op?.nats === undefined && op?.redis === undefined) throw new UserError(`no client operation "${type}" with an HTTP, NATS or Redis API; the system's are ${[...ops.keys()].join(', ')}`);
        const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
        // A NATS request's subject and message, or a Redis command's words, come from the body; a bad body is the caller's error, before anything is sent.
        const nats = op.nats && { subject: natsSubject(op.nats.subject, fields), ...natsMessage(fields), ...at(node, op.nats.port) };
        const redis = op.redis && { command: redisCommand(op.redis.command, fields, placeholders), ...at(node, op.redis.port) };
        const msgId = `${name}-${next()}`;
        emit({ node: name, kind: 'send', peer: node, msgId, msg: type, fields: { body, ...(nats && { subject: nats.subject }), ...(redis && { command: redis.command }) } });
        let reply: Json;
        try {
          if (redis) {
            const r = await redisRequest({ ...redis, timeoutMs });
            reply = r instanceof RedisErrorReply ? { status: 400, error: r.message } : { status: 200, data: replyJson(r) };
          } else if (nats) {
            const r = await natsRequest({ ...nats, timeoutMs });
            reply = { status: r.status, ...(r.description !== undefined && { description: r.description }), headers: r.headers, data: parseJson(r.data.toString()) };
          } else {
            const res = await fetch(url(node, { ...op, http: op.http as NonNullable<ClientOperation['http']> }), {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
              signal: AbortSignal.timeout(timeoutMs),
            });
            const text = await res.text();
            reply = { status: res.status, body: parseJson(text) };
          }
        } catch (err) {
          const reason = err instanceof Error && err.name === 'TimeoutError' ? `no reply within ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
          emit({ node: name, kind: 'log', level: 'warn', peer: node, msg: `${type} failed: ${reason}` });
          throw new Error(`${type} to ${node}: ${reason}`);
        }
        emit({ node: name, kind: 'recv', peer: node, msgId: `${msgId}-reply`, msg: `${type} reply`, fields: { reply } });
        return reply;
      },
      close() {},
    };
  }

  events(): readonly Event[] {
    return this.log.events();
  }

  onEvent(listener: (e: Event) => void): () => void {
    return this.log.subscribe(listener);
  }

  emit(e: Omit<Event, 'id' | 'ts'> & { ts?: number }): Event {
    return this.log.add({ ...e, ts: e.ts ?? this.now() });
  }

  now(): number {
    return Math.round((performance.timeOrigin + performance.now() - this.t0Ms) * 1000);
  }

  private url(node: string, port: string, p: string): string {
    const net = this.requireNet('reach a node');
    return `http://${net.address(node).ip}:${this.port(port)}${p}`;
  }

  /** A node's address and one of its ports, for a client of a TCP protocol. */
  private at(node: string, port: string): { host: string; port: number } {
    return { host: this.requireNet('reach a node').address(node).ip, port: this.port(port) };
  }

  private port(name: string): number {
    const number = this.spec.node.ports[name];
    if (number === undefined) throw new UserError(`${this.opts.system.id}: no port "${name}" (the nodes' ports are ${Object.keys(this.spec.node.ports).join(', ')})`);
    return number;
  }

  private spawnNode(slot: Slot, why: 'start' | 'restart'): void {
    const net = this.requireNet(why);
    const built = this.built as UpstreamBuild;
    const me = net.address(slot.id);
    fs.mkdirSync(slot.dataDir, { recursive: true });
    if (me.uid !== undefined) chownTree(slot.dataDir, me.uid);
    const fill = (s: string) =>
      s
        .replace(/\{ip:([a-z0-9-]+)\}/g, (_, n: string) => net.address(n).ip)
        .replace(/\{port:([A-Za-z0-9._+-]+)\}/g, (_, p: string) => String(this.spec.node.ports[p] ?? `{port:${p}}`))
        .replaceAll('{ip}', me.ip)
        .replaceAll('{id}', slot.id)
        .replaceAll('{dataDir}', DATA_DIR);
    const binary = `${BIN_DIR}/${path.basename(built.binary)}`;
    const system = bwrapSystemBinds([packageRoot(), defaultBugsDir()]);
    const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', ...system.args, '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'];
    args.push('--ro-bind', built.dir, BIN_DIR, '--bind', slot.dataDir, DATA_DIR, '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/tmp', '--chdir', DATA_DIR, '--');
    // As root the node drops to its own uid (the run network tells its packets apart by it) and every capability.
    const drop = me.uid !== undefined ? ['setpriv', `--reuid=${me.uid}`, `--regid=${me.uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs'] : [];
    const command = [...net.enter(), bwrapProgram() as string, ...args, ...drop, binary, ...this.spec.node.args.map(fill)];
    const child = spawn(command[0] as string, command.slice(1), { env: {}, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const stderrTail: string[] = [];
    const onLine = (line: string, stream: 'stdout' | 'stderr') => {
      if (stream === 'stderr') {
        stderrTail.push(line);
        if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
      }
      const ts = this.now();
      const event: EventInput = LOG_READERS[this.spec.logs](line, slot.id, ts) ?? { ts, node: slot.id, kind: 'log', level: stream === 'stderr' ? 'warn' : 'info', msg: line };
      this.log.add(event);
    };
    readLines(child.stdout, (l) => onLine(l, 'stdout'));
    readLines(child.stderr, (l) => onLine(l, 'stderr'));
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('error', (err) => {
        stderrTail.push(`spawn failed: ${err.message}`);
        resolve({ code: null, signal: null });
      });
      child.once('exit', () => {
        const grace = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, OUTPUT_GRACE_MS);
        grace.unref();
        child.once('close', () => clearTimeout(grace));
      });
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    if (child.pid === undefined) throw new Error(`cannot start node ${slot.id}: ${stderrTail.join('\n')}`);
    const proc: Incarnation = { pid: child.pid, closed, stderrTail };
    slot.proc = proc;
    slot.killing = false;
    slot.status = 'starting';
    delete slot.exitCode;
    this.emit({ node: slot.id, kind: 'proc', level: 'info', msg: why, fields: { pid: child.pid, ip: me.ip } });
    void closed.then((exit) => {
      if (slot.proc !== proc) return;
      const crashed = !slot.killing;
      slot.proc = undefined;
      slot.exitCode = exit.code;
      slot.status = crashed ? 'exited' : 'stopped';
      this.log.add({ ts: this.now(), node: slot.id, kind: 'proc', level: crashed && exit.code !== 0 ? 'error' : 'info', msg: 'exit', fields: { pid: proc.pid, code: exit.code, signal: exit.signal } });
    });
  }

  /** Polls the node's readiness probe until it answers at all (any HTTP status; any Redis reply), or it exits. */
  private async awaitReady(slot: Slot): Promise<void> {
    const proc = slot.proc;
    if (proc === undefined) throw new Error(`node ${slot.id} is not running`);
    const ready = this.spec.node.ready;
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    let exited = false;
    void proc.closed.then(() => (exited = true));
    for (;;) {
      if (exited || slot.proc !== proc) throw new Error(`node ${slot.id} exited while starting; its last stderr lines:\n${proc.stderrTail.join('\n')}`);
      try {
        if ('redis' in ready) await redisRequest({ ...this.at(slot.id, ready.port), command: ready.redis, timeoutMs: 1_000 });
        else await fetch(this.url(slot.id, ready.port, ready.path), { signal: AbortSignal.timeout(1_000) });
        if (slot.status === 'starting') slot.status = 'running';
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`node ${slot.id} did not answer ${'redis' in ready ? ready.redis.join(' ') : `on ${ready.path}`} within ${this.opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms; its last stderr lines:\n${proc.stderrTail.join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private async shutdown(): Promise<void> {
    const wasStarted = this.phase !== 'new';
    this.phase = 'stopping';
    const procs: Incarnation[] = [];
    for (const slot of this.slots.values()) {
      if (slot.proc === undefined) continue;
      slot.killing = true;
      procs.push(slot.proc);
      signalGroup(slot.proc.pid, 'SIGCONT');
      signalGroup(slot.proc.pid, 'SIGKILL');
    }
    await Promise.all(procs.map((p) => p.closed));
    await this.netOps.catch(() => {});
    try {
      await this.net?.tearDown();
    } finally {
      if (wasStarted) this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'cluster stopped' });
      await this.log.close();
      this.phase = 'stopped';
    }
  }

  private queueNet(op: () => Promise<void>): void {
    if (this.netFailure) throw this.netFailure;
    this.netOps = this.netOps.then(op).catch((err: unknown) => {
      this.netFailure = err instanceof Error ? err : new Error(String(err));
      this.emit({ node: 'harness', kind: 'log', level: 'error', msg: `network fault failed: ${this.netFailure.message}` });
    });
  }

  private requireNet(action: string): RunNetwork {
    if (this.net === undefined) throw new Error(`cannot ${action}: the cluster is ${this.phase}`);
    return this.net;
  }

  private requireRunning(action: string): void {
    if (this.phase !== 'running') throw new Error(`cannot ${action}: the cluster is ${this.phase}`);
  }

  private slot(node: string): Slot {
    const s = this.slots.get(node);
    if (s === undefined) throw new UserError(`no node "${node}"; the nodes are ${[...this.slots.keys()].join(', ')}`);
    return s;
  }

  private liveProc(slot: Slot, action: string): Incarnation {
    if (slot.proc === undefined) throw new Error(`cannot ${action} node ${slot.id}: it is ${slot.status}`);
    return slot.proc;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function chownTree(dir: string, uid: number): void {
  fs.chownSync(dir, uid, uid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, uid);
    else fs.lchownSync(p, uid, uid);
  }
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}
