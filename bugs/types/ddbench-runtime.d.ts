// The node runtime a DDBench system is written against. A system module exports
// `createNode(rt)`, where `rt` is a DDBench.NodeRuntime, and reaches the network,
// timers, randomness, clock and disk only through it, so the same code runs live
// (real processes and sockets) or simulated (one process, virtual time, a seeded
// scheduler).
//
// Every workspace carries this file and a jsconfig.json naming it, so the editor
// completes `rt.` and shows these comments. Nothing is type-checked unless a file
// asks for it with `// @ts-check` on its first line.

declare namespace DDBench {
  type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

  /** A message between nodes, or between a client and a node. `type` names the RPC. */
  interface Message {
    type: string;
    body: Json;
  }

  interface Incoming extends Message {
    from: string;
    /** Unique id of this message, shared by its send and receive events. */
    msgId: string;
  }

  type Fields = Record<string, Json>;

  interface Logger {
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
  interface Disk {
    read(file: string): string | undefined;
    write(file: string, data: string): void;
    append(file: string, data: string): void;
    remove(file: string): void;
    list(): string[];
    /** Makes every buffered write of this node durable. */
    sync(): void;
  }

  interface TimerHandle {
    cancel(): void;
  }

  interface NodeRuntime {
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

  interface SystemNode {
    /** Called once after the node is connected; a restarted node starts here too. */
    start(): void;
  }

  interface SystemModule {
    createNode(rt: NodeRuntime): SystemNode;
  }
}
