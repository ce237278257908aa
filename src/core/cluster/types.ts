import type { Isolation } from '../sandbox/levels';
import type { Event } from '../events/event';
import type { Json } from '../../runtime/types';

export type NodeStatus = 'starting' | 'running' | 'paused' | 'stopped' | 'exited';

/** Where live nodes run: child processes (the default) or containers. */
export type BackendName = 'process' | 'docker';
export const BACKENDS: readonly BackendName[] = ['process', 'docker'];

export interface NodeInfo {
  id: string;
  status: NodeStatus;
  pid?: number;
  /** The node's container (docker backend). */
  container?: string;
  /** Loopback port of the node's debug-state HTTP endpoint, once the node reported it. */
  statePort?: number;
  /** Loopback port of the node's Node.js inspector, for attaching a debugger. */
  inspectPort?: number;
  exitCode?: number | null;
}

/**
 * A fault rule on messages from `from` to `to` (`*` matches any endpoint), optionally only
 * for one message `type`. Probabilities are drawn from the router's seeded generator.
 */
export interface LinkFault {
  from: string;
  to: string;
  type?: string;
  drop?: number;
  duplicate?: number;
  /** Probability that a message is held back and delivered after the next one on its link. */
  reorder?: number;
  /** Extra delay in ms, drawn uniformly from [min, max]. */
  delayMs?: [number, number];
}

export interface ClusterOptions {
  /** The system's source folder (a workspace, or the bug set's correct source). */
  sourceDir: string;
  /** The system module, relative to sourceDir. */
  entry: string;
  nodes: string[];
  /** Per-node configuration passed to the system (rt.config). */
  config: Record<string, Json>;
  /** Folder for this run: node data dirs, events.jsonl, logs. */
  runDir: string;
  seed: number;
  /** Start nodes with --inspect on free ports. */
  inspect?: boolean;
  /** Extra environment for node processes. */
  env?: Record<string, string>;
  /** CPU seconds each incarnation of a node may use (a trial sets its budget); unbounded by default. */
  cpuSeconds?: number;
}

/** tc netem settings for a node's network interface. */
export interface NetemRule {
  delayMs?: number;
  /** Variation around delayMs. */
  jitterMs?: number;
  /** Percentages of packets, 0-100. */
  lossPct?: number;
  duplicatePct?: number;
  /** Sent at once instead of delayed (needs delayMs). */
  reorderPct?: number;
}

/**
 * Faults below the router, on the nodes' real network: only backends that give each node
 * its own network stack (docker) have them. They hit every connection of the node,
 * its link to the router included.
 */
export interface NetworkFaults {
  /** Takes the node off the run's network (`docker network disconnect`); its TCP connections stall. */
  disconnect(node: string): Promise<void>;
  /** Puts it back with its old address, so stalled connections resume. */
  reconnect(node: string): Promise<void>;
  /** Applies tc netem inside the node's network namespace; a UserError where the kernel or image lacks it. */
  shapeTraffic(node: string, rule: NetemRule): Promise<void>;
  clearTraffic(node: string): Promise<void>;
}

/**
 * What the harness does to a running cluster: its node and network faults, a node's
 * state, clients. A cluster offers it, and a scenario gets it through its context.
 */
export interface ClusterControls {
  kill(node: string): Promise<void>;
  restart(node: string): Promise<void>;
  pause(node: string): Promise<void>;
  resume(node: string): Promise<void>;
  /** Cuts every link between endpoints in different groups; endpoints in no group keep all links. */
  partition(groups: string[][]): void;
  heal(): void;
  addLinkFault(fault: LinkFault): void;
  clearLinkFaults(): void;
  /** Shifts a node's clock (rt.now) by the given ms. */
  skewClock(node: string, offsetMs: number): void;
  /** The node's state from its debug-state endpoint. */
  state(node: string): Promise<Json>;
  /** A client endpoint that talks to the nodes through the router. */
  client(name: string): Promise<ClusterClient>;
}

export interface Cluster extends ClusterControls {
  readonly runDir: string;
  /** Network-level faults, where the backend has a real network (docker). */
  readonly networkFaults?: NetworkFaults;
  /** How the nodes' code is kept from the rest of the machine; known once a node started. */
  readonly isolation?: Isolation;
  nodes(): NodeInfo[];
  /** Starts all nodes and resolves when each has connected to the router. */
  start(): Promise<void>;
  /** Stops every node and the router, and removes every process the run started. */
  stop(): Promise<void>;
  /** Every event so far, in arrival order. */
  events(): readonly Event[];
  /** Subscribes to new events; returns the unsubscribe function. */
  onEvent(listener: (e: Event) => void): () => void;
  /** Adds a harness-side event (faults the harness injects, checks, notes). */
  emit(e: Omit<Event, 'id' | 'ts'> & { ts?: number }): Event;
  /** Microseconds since the run started. */
  now(): number;
}

export interface ClusterClient {
  readonly name: string;
  /** Sends a request and waits for the reply whose body has the same `reqId`. */
  request(node: string, type: string, body: Record<string, Json>, timeoutMs: number): Promise<Json>;
  close(): void;
}
