/**
 * The interface a bug system sees. A system module exports `createNode(rt)` and
 * reaches the network, timers, randomness, clock and disk only through `rt`, so
 * the same code runs live (real processes and sockets) or simulated (one process,
 * virtual time, a seeded scheduler).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A message between nodes, or between a client and a node. `type` names the RPC. */
export interface Message {
  type: string;
  body: Json;
}

export interface Incoming extends Message {
  from: string;
  /** Unique id of this message, shared by its send and receive events. */
  msgId: string;
}

export type Fields = Record<string, Json>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

/**
 * A node's disk. Writes are buffered in the node's memory until `sync`, so a crash
 * (kill, or a simulated crash) loses everything not yet synced — like a real
 * process whose write() had not reached fsync.
 */
export interface Disk {
  read(file: string): string | undefined;
  write(file: string, data: string): void;
  append(file: string, data: string): void;
  remove(file: string): void;
  list(): string[];
  /** Makes every buffered write of this node durable. */
  sync(): void;
}

export interface TimerHandle {
  cancel(): void;
}

export interface NodeRuntime {
  /** This node's id, for example `n1`. */
  readonly id: string;
  /** Every server node of the cluster, this one included, in configuration order. */
  readonly nodes: readonly string[];
  /** Per-node configuration from system.json (`config`), merged with the scenario's overrides. */
  readonly config: Readonly<Record<string, Json>>;
  send(to: string, type: string, body: Json): void;
  onMessage(handler: (msg: Incoming) => void): void;
  setTimer(ms: number, fn: () => void): TimerHandle;
  /** Milliseconds on this node's clock (skewable by the harness). */
  now(): number;
  /** Seeded randomness in [0, 1). */
  random(): number;
  readonly disk: Disk;
  readonly log: Logger;
  /** Registers the function whose result the debug-state endpoint returns. */
  exposeState(fn: () => Json): void;
}

export interface SystemNode {
  /** Called once after the node is connected; a restarted node starts here too. */
  start(): void;
}

export interface SystemModule {
  createNode(rt: NodeRuntime): SystemNode;
}
