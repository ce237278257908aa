import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type Docker from 'dockerode';
import { idempotent, connectEngine } from './docker/engine';
import { NETEM_CLEAR, netemCommand, NOTHING_TO_CLEAR, runTc } from './docker/netem';
import { startNodeContainer, type NodeContainer, type NodeLimits } from './docker/node-container';
import { resolveNodeImage, type NodeImage, type SystemImageSpec } from './docker/node-image';
import { reapDockerLeftovers, removeRun, runLabels } from './docker/run-labels';
import { checkGatewayIsLocal, createRunNetwork, type RunNetwork } from './docker/run-network';
import { LiveCluster, type LaunchedNode, type LiveClusterOptions, type NodeSlot } from './live-cluster';
import { locateLiveHost } from './live-host-path';
import type { NetemRule, NetworkFaults } from './types';

export interface DockerBackendOptions {
  /** An image to run the nodes in as it is (ddbench.docker.image, --docker-image); it must have `node` on PATH. */
  image?: string;
  /** The system's own image or Dockerfile context (system.json `docker`), which comes first. */
  system?: SystemImageSpec;
  /** Resource limits for every node... */
  limits?: NodeLimits;
  /** ...and per node, over those. */
  nodeLimits?: Record<string, NodeLimits>;
}

export interface DockerClusterOptions extends LiveClusterOptions {
  /** The built live host; by default found in the package (locateLiveHost). */
  liveHostPath?: string;
  docker?: DockerBackendOptions;
}

interface ContainerNode extends LaunchedNode {
  box: NodeContainer;
}

/**
 * The docker backend: each node a container on a bridge network of its own run, the
 * same live host as the process backend inside. The router stays in the harness,
 * listening on the network's gateway address (the host's side of the bridge, not a
 * public interface), so message faults, records and the timeline are exactly the
 * process backend's; on top come network faults (disconnect, tc netem) and limits.
 *
 * Nothing outlives a run: stop() removes its containers and network (on errors too);
 * containers remove themselves when they end; and a run whose harness died is found by
 * its labels and removed at the next start (docker/run-labels.ts).
 */
export class DockerCluster extends LiveCluster<ContainerNode> implements NetworkFaults {
  readonly backend = 'docker';
  readonly isolation = 'docker';
  readonly networkFaults: NetworkFaults = this;
  readonly runId: string;
  private docker?: Docker;
  private network?: RunNetwork;
  private image?: NodeImage;
  private hostPath?: string;
  /** Nodes currently taken off the network. */
  private readonly disconnected = new Set<string>();
  /** Every container's removal, which stop() waits for before it removes the network. */
  private readonly removals: Promise<void>[] = [];

  constructor(private readonly dockerOpts: DockerClusterOptions) {
    super(dockerOpts);
    this.hostPath = dockerOpts.liveHostPath;
    const base = path.basename(dockerOpts.runDir).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
    this.runId = `${base}-${randomBytes(4).toString('hex')}`;
  }

  /** The image the nodes run in, once started. */
  get nodeImage(): NodeImage | undefined {
    return this.image;
  }

  protected async prepare(): Promise<void> {
    this.hostPath ??= locateLiveHost();
    const docker = await connectEngine();
    this.docker = docker;
    const reaped = await reapDockerLeftovers(docker);
    if (reaped.containers.length + reaped.networks.length > 0) {
      this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'removed leftovers of dead runs', fields: { containers: reaped.containers, networks: reaped.networks } });
    }
    this.image = await resolveNodeImage(docker, {
      configured: this.dockerOpts.docker?.image,
      system: this.dockerOpts.docker?.system,
      onProgress: (msg) => this.emit({ node: 'harness', kind: 'log', level: 'info', msg }),
    });
    this.network = await createRunNetwork(docker, `ddbench-${this.runId}`, runLabels(this.runId, this.runDir));
    await checkGatewayIsLocal(this.network.gateway);
    this.emit({ node: 'harness', kind: 'proc', level: 'info', msg: 'docker network', fields: { network: this.network.name, gateway: this.network.gateway, image: this.image.ref, origin: this.image.origin } });
  }

  protected routerHost(): string {
    if (this.network === undefined) throw new Error('the docker cluster has no network yet');
    return this.network.gateway;
  }

  protected async launch(slot: NodeSlot<ContainerNode>, env: Record<string, string>, incarnation: number): Promise<ContainerNode> {
    const { docker, network, image, hostPath } = this;
    if (docker === undefined || network === undefined || image === undefined || hostPath === undefined) throw new Error(`cannot start node ${slot.id}: the cluster is not prepared`);
    const box = await startNodeContainer({
      docker,
      name: `ddbench-${this.runId}-${slot.id}-${incarnation}`,
      node: slot.id,
      image: image.ref,
      network: network.name,
      labels: runLabels(this.runId, this.runDir),
      env,
      hostPath,
      sourceDir: path.resolve(this.opts.sourceDir),
      dataDir: slot.dataDir,
      inspect: this.opts.inspect === true,
      limits: { ...this.dockerOpts.docker?.limits, ...this.dockerOpts.docker?.nodeLimits?.[slot.id] },
      now: () => this.now(),
      onEvent: (e) => this.onNodeEvent(slot, e),
    });
    this.removals.push(box.removed);
    this.disconnected.delete(slot.id);
    return {
      box,
      closed: box.closed,
      info: { container: box.name, ...(box.pid !== undefined && { pid: box.pid }), ...(box.inspectPort !== undefined && { inspectPort: box.inspectPort }) },
      fields: { container: box.name },
      startFields: { ip: box.ip, statePort: box.statePort, ...(box.inspectPort !== undefined && { inspectPort: box.inspectPort }) },
    };
  }

  protected async forceKill(node: ContainerNode): Promise<void> {
    // SIGKILL, paused or not; the container then removes itself.
    await idempotent(() => node.box.container.kill());
  }

  protected async freeze(node: ContainerNode): Promise<void> {
    await node.box.container.pause();
  }

  protected async thaw(node: ContainerNode): Promise<void> {
    await node.box.container.unpause();
  }

  protected override hostStatePort(node: ContainerNode): number {
    return node.box.statePort;
  }

  protected async cleanUp(): Promise<void> {
    // Every node is gone by now and its container removing itself; a network with containers still on it cannot go.
    await Promise.all(this.removals);
    if (this.docker !== undefined) await removeRun(this.docker, this.runId);
  }

  async disconnect(node: string): Promise<void> {
    const current = this.liveNode(this.slot(node), 'disconnect');
    const { docker, network } = this.prepared();
    if (this.disconnected.has(node)) return;
    await docker.getNetwork(network.id).disconnect({ Container: current.box.container.id, Force: true });
    this.disconnected.add(node);
    this.emitFault(node, 'network disconnect', { network: network.name, ip: current.box.ip });
  }

  async reconnect(node: string): Promise<void> {
    const current = this.liveNode(this.slot(node), 'reconnect');
    const { docker, network } = this.prepared();
    if (!this.disconnected.has(node)) return;
    await docker.getNetwork(network.id).connect({
      Container: current.box.container.id,
      EndpointConfig: { IPAMConfig: { IPv4Address: current.box.ip }, Aliases: [node] },
    });
    this.disconnected.delete(node);
    this.emitFault(node, 'network reconnect', { network: network.name, ip: current.box.ip });
  }

  async shapeTraffic(node: string, rule: NetemRule): Promise<void> {
    const current = this.liveNode(this.slot(node), 'shape the traffic of');
    const cmd = netemCommand(rule);
    await runTc(current.box.container, node, cmd);
    this.emitFault(node, 'netem', { ...rule });
  }

  async clearTraffic(node: string): Promise<void> {
    const current = this.liveNode(this.slot(node), 'clear the traffic rules of');
    await runTc(current.box.container, node, NETEM_CLEAR, NOTHING_TO_CLEAR);
    this.emitFault(node, 'netem cleared', {});
  }

  private prepared(): { docker: Docker; network: RunNetwork } {
    this.requireRunning('change the network');
    if (this.docker === undefined || this.network === undefined) throw new Error('the docker cluster has no network');
    return { docker: this.docker, network: this.network };
  }
}
