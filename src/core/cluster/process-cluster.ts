import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultBugsDir } from '../bugs/catalog';
import { DDBENCH_DIR, packageRoot } from '../paths';
import type { Isolation } from '../sandbox/levels';
import { sandboxCommand } from '../sandbox/sandbox';
import { makeTempDir, type TempDir } from '../temp-dirs';
import { LiveCluster, type LaunchedNode, type LiveClusterOptions, type NodeSlot } from './live-cluster';
import { locateLiveHost } from './live-host-path';
import { nodeEnv, spawnNodeProcess, type NodeProcess } from './node-process';
import { freePort } from './ports';
import { reapLeftovers, RunRegistry, signalGroup } from './process-registry';
import type { Router } from './router';
import { StateProxy } from './state-proxy';

export interface ProcessClusterOptions extends LiveClusterOptions {
  /** The built live host; by default found in the package (locateLiveHost). */
  liveHostPath?: string;
}

interface ProcessNode extends LaunchedNode {
  proc: NodeProcess;
  proxy: StateProxy;
}

/** A live host's V8 heap limit; a node past it ends with an out-of-memory crash. */
const NODE_HEAP_MB = 1024;

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

/** Where an endpoint named `name` listens: a file in the run's socket folder, or a named pipe on Windows. */
function socketAddress(dir: string, name: string): string {
  return process.platform === 'win32' ? `\\\\.\\pipe\\${path.basename(dir)}-${name}` : path.join(dir, `${name}.sock`);
}

/**
 * The default backend: every node is a live host child process leading its own
 * process group, sandboxed (sandbox.ts): it sees its source read-only, its data folder,
 * and two Unix sockets, the router's and its own state endpoint's. See
 * process-registry.ts for how no process outlives the run.
 */
export class ProcessCluster extends LiveCluster<ProcessNode> {
  readonly backend = 'process';
  private readonly runId: string;
  private registry?: RunRegistry;
  private hostPath?: string;
  /** Private (0700) and short, since a Unix socket's path has ~100 bytes at most. */
  private sockets?: TempDir;
  private readonly proxies = new Set<StateProxy>();
  private isolationUsed?: Isolation;

  constructor(opts: ProcessClusterOptions) {
    super(opts);
    this.hostPath = opts.liveHostPath;
    this.runId = `${path.basename(opts.runDir).replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  get isolation(): Isolation | undefined {
    return this.isolationUsed;
  }

  protected async prepare(): Promise<void> {
    reapLeftovers();
    this.hostPath ??= locateLiveHost();
    this.sockets = makeTempDir('ddbench-');
    this.registry = new RunRegistry(this.runId, this.runDir);
  }

  protected routerHost(): string {
    return '127.0.0.1';
  }

  protected override async routerListening(router: Router): Promise<void> {
    if (this.sockets !== undefined) await router.listenSocket(socketAddress(this.sockets.dir, 'router'));
  }

  protected async launch(slot: NodeSlot<ProcessNode>, env: Record<string, string>): Promise<ProcessNode> {
    const inspectPort = this.opts.inspect === true ? await freePort() : undefined;
    const { hostPath, registry } = this;
    const socketDir = this.sockets?.dir;
    // stop() may have run while we awaited; a process spawned now would be one more to kill.
    if (this.isStopping() || hostPath === undefined || registry === undefined || socketDir === undefined) throw new Error(`cannot start node ${slot.id}: the cluster is stopped`);
    const routerSocket = socketAddress(socketDir, 'router');
    const nodeSockets = path.join(socketDir, slot.id);
    fs.mkdirSync(nodeSockets, { recursive: true, mode: 0o700 });
    const stateSocket = socketAddress(nodeSockets, 'state');
    fs.rmSync(stateSocket, { force: true });
    const proxy = await StateProxy.listen(stateSocket);
    this.proxies.add(proxy);
    const sourceDir = path.resolve(this.opts.sourceDir);
    const command = sandboxCommand(
      {
        script: hostPath,
        nodeArgs: inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectPort}`],
        readOnly: [sourceDir],
        // The workspace's own runs (earlier trials, records) are not the node's to read.
        hide: [path.join(sourceDir, DDBENCH_DIR)],
        readWrite: [slot.dataDir, routerSocket, nodeSockets],
        env: nodeEnv({ ...env, DDBENCH_ROUTER: `unix:${routerSocket}`, DDBENCH_STATE_LISTEN: `unix:${stateSocket}` }),
        cwd: sourceDir,
        debuggable: inspectPort !== undefined,
        limits: { heapMb: NODE_HEAP_MB, ...(this.opts.cpuSeconds !== undefined && { cpuSeconds: this.opts.cpuSeconds }) },
      },
      [packageRoot(), defaultBugsDir(), os.homedir()],
    );
    this.isolationUsed = command.isolation;
    const proc = spawnNodeProcess({ node: slot.id, command, now: () => this.now(), onEvent: (e) => this.onNodeEvent(slot, e) });
    registry.add(proc.pid);
    return {
      proc,
      proxy,
      closed: proc.closed,
      info: { pid: proc.pid, ...(inspectPort !== undefined && { inspectPort }) },
      fields: { pid: proc.pid, isolation: command.isolation },
      startFields: inspectPort !== undefined ? { inspectPort } : {},
    };
  }

  protected override hostStatePort(node: ProcessNode): number {
    return node.proxy.port;
  }

  protected async forceKill(node: ProcessNode): Promise<void> {
    signalGroup(node.proc.pid, 'SIGKILL');
  }

  protected async freeze(node: ProcessNode): Promise<void> {
    signalGroup(node.proc.pid, 'SIGSTOP');
    await waitUntilStopped(node.proc.pid);
  }

  protected async thaw(node: ProcessNode): Promise<void> {
    signalGroup(node.proc.pid, 'SIGCONT');
  }

  protected override onNodeGone(node: ProcessNode): void {
    // Anything the node left in its group goes with it.
    signalGroup(node.proc.pid, 'SIGKILL');
    this.registry?.remove(node.proc.pid);
    this.proxies.delete(node.proxy);
    void node.proxy.close();
  }

  protected async cleanUp(): Promise<void> {
    await Promise.all([...this.proxies].map((p) => p.close()));
    this.proxies.clear();
    this.registry?.close();
    this.sockets?.remove();
  }
}
