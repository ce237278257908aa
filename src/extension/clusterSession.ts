import * as vscode from 'vscode';
import type { BackendOptions } from '../core/cluster';
import type { Cluster, NodeInfo } from '../core/cluster/types';
import { launchWorkspaceCluster } from '../core/cluster/launch';
import type { WorkspaceInfo } from '../core/bugs/workspace';
import { UserError } from '../core/errors';

/** How often node states are re-read; the Cluster API has no change event for process state. */
const POLL_MS = 1000;

export interface RunningCluster {
  readonly workspace: WorkspaceInfo;
  readonly cluster: Cluster;
  /** The groups of the current partition, or undefined when every link is up. */
  readonly partition: readonly (readonly string[])[] | undefined;
}

/**
 * The one cluster this window runs. Views and the status bar listen to `onDidChange`;
 * node status is polled and compared so listeners fire only on real changes.
 */
export class ClusterSession implements vscode.Disposable {
  private current: { workspace: WorkspaceInfo; cluster: Cluster; partition: string[][] | undefined } | undefined;
  private starting = false;
  private timer: NodeJS.Timeout | undefined;
  private lastFingerprint = '';
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  get running(): RunningCluster | undefined {
    return this.current;
  }

  get isStarting(): boolean {
    return this.starting;
  }

  async launch(workspace: WorkspaceInfo, opts: { inspect: boolean; backend: BackendOptions }): Promise<RunningCluster> {
    if (this.current || this.starting) throw new UserError('a cluster is already running in this window; stop it first');
    this.starting = true;
    this.fire();
    try {
      const cluster = await launchWorkspaceCluster(workspace.dir, { inspect: opts.inspect, backend: opts.backend });
      this.current = { workspace, cluster, partition: undefined };
      this.timer = setInterval(() => this.poll(), POLL_MS);
      return this.current;
    } finally {
      this.starting = false;
      this.fire();
    }
  }

  async stop(): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      await current.cluster.stop();
    } finally {
      this.fire();
    }
  }

  nodes(): NodeInfo[] {
    return this.current?.cluster.nodes() ?? [];
  }

  /** Runs a node action on the running cluster, then refreshes listeners. */
  async act<T>(action: (cluster: Cluster) => Promise<T> | T): Promise<T> {
    const current = this.require();
    try {
      return await action(current.cluster);
    } finally {
      this.fire();
    }
  }

  isolate(isolated: string[]): void {
    const current = this.require();
    const rest = current.cluster.nodes().map((n) => n.id).filter((id) => !isolated.includes(id));
    const groups = [isolated, rest].filter((g) => g.length > 0);
    current.cluster.partition(groups);
    current.partition = groups;
    this.fire();
  }

  heal(): void {
    const current = this.require();
    current.cluster.heal();
    current.partition = undefined;
    this.fire();
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.changed.dispose();
  }

  private require(): NonNullable<ClusterSession['current']> {
    if (!this.current) throw new UserError('no cluster is running; launch one first');
    return this.current;
  }

  private poll(): void {
    const fingerprint = JSON.stringify(this.nodes());
    if (fingerprint !== this.lastFingerprint) this.fire();
  }

  private fire(): void {
    this.lastFingerprint = JSON.stringify(this.nodes());
    this.changed.fire();
  }
}
