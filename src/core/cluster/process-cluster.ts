import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LiveCluster, type LaunchedNode, type LiveClusterOptions, type NodeSlot } from './live-cluster';
import { locateLiveHost } from './live-host-path';
import { spawnNodeProcess, type NodeProcess } from './node-process';
import { freePort } from './ports';
import { reapLeftovers, RunRegistry, signalGroup } from './process-registry';
import type { EndpointInfo } from './router';

export interface ProcessClusterOptions extends LiveClusterOptions {
  /** The built live host; by default found in the package (locateLiveHost). */
  liveHostPath?: string;
}

interface ProcessNode extends LaunchedNode {
  proc: NodeProcess;
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
 * process group; all traffic goes through the router on loopback. See
 * process-registry.ts for how no process outlives the run.
 */
export class ProcessCluster extends LiveCluster<ProcessNode> {
  readonly backend = 'process';
  private readonly runId: string;
  private registry?: RunRegistry;
  private hostPath?: string;

  constructor(opts: ProcessClusterOptions) {
    super(opts);
    this.hostPath = opts.liveHostPath;
    this.runId = `${path.basename(opts.runDir).replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  protected async prepare(): Promise<void> {
    reapLeftovers();
    this.hostPath ??= locateLiveHost();
    this.registry = new RunRegistry(this.runId, this.runDir);
  }

  protected routerHost(): string {
    return '127.0.0.1';
  }

  protected async launch(slot: NodeSlot<ProcessNode>, env: Record<string, string>): Promise<ProcessNode> {
    const inspectPort = this.opts.inspect === true ? await freePort() : undefined;
    const { hostPath, registry } = this;
    // stop() may have run while we awaited; a process spawned now would be one more to kill.
    if (this.isStopping() || hostPath === undefined || registry === undefined) throw new Error(`cannot start node ${slot.id}: the cluster is stopped`);
    const proc = spawnNodeProcess({
      node: slot.id,
      hostPath,
      cwd: this.opts.sourceDir,
      inspectPort,
      env,
      now: () => this.now(),
      onEvent: (e) => this.onNodeEvent(slot, e),
    });
    registry.add(proc.pid);
    return {
      proc,
      closed: proc.closed,
      info: { pid: proc.pid, ...(inspectPort !== undefined && { inspectPort }) },
      fields: { pid: proc.pid },
      startFields: inspectPort !== undefined ? { inspectPort } : {},
    };
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

  protected ownsHello(_slot: NodeSlot<ProcessNode>, node: ProcessNode, hello: EndpointInfo): boolean {
    // A hello from another pid is a stale or foreign process, not this slot's.
    return node.proc.pid === hello.pid;
  }

  protected override onNodeGone(node: ProcessNode): void {
    // Anything the node left in its group goes with it.
    signalGroup(node.proc.pid, 'SIGKILL');
    this.registry?.remove(node.proc.pid);
  }

  protected async cleanUp(): Promise<void> {
    this.registry?.close();
  }
}
