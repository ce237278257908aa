import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import type { EventInput } from '../../events/event';
import { DDBENCH_DIR } from '../../paths';
import { collectNodeOutput, describeExit, type NodeExit } from '../node-output';
import { idempotent, statusOf } from './engine';
import { LABEL } from './run-labels';

/** Ports inside every node container; the engine publishes each on a free loopback port of the host. */
export const STATE_PORT = 7070;
export const INSPECT_PORT = 9229;

export interface NodeLimits {
  /** Memory limit in MiB (no swap on top). */
  memoryMb?: number;
  /** CPUs, fractional allowed (0.5 = half a core). */
  cpus?: number;
  /** Most processes and threads the node may have. */
  pids?: number;
}

export interface NodeContainerSpec {
  docker: Docker;
  name: string;
  node: string;
  image: string;
  network: string;
  labels: Record<string, string>;
  env: Record<string, string>;
  hostPath: string;
  sourceDir: string;
  dataDir: string;
  inspect: boolean;
  limits: NodeLimits;
  now(): number;
  onEvent(event: EventInput): void;
}

export interface NodeContainer {
  container: Docker.Container;
  name: string;
  /** Address on the run's network, for reconnecting after a disconnect fault. */
  ip: string;
  /** The container's main process as the host sees it (local engines only). */
  pid?: number;
  statePort: number;
  inspectPort?: number;
  /** Resolves once the node's process ended and its output was read; the container may still be being removed. */
  closed: Promise<NodeExit>;
  /** Resolves once the engine removed the container (or could not say: waiting failed). */
  removed: Promise<void>;
}

const SIGNALS = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/** A container's exit status as the process backend reports it: 128+n is signal n (the init passes it on). */
function exitOf(status: number, stderrTail: string[]): NodeExit {
  const signal = status > 128 ? SIGNALS.get(status - 128) : undefined;
  return signal === undefined ? { code: status, signal: null, stderrTail } : { code: null, signal, stderrTail };
}

function hostPortOf(info: Docker.ContainerInspectInfo, port: number): number {
  const binding = info.NetworkSettings.Ports[`${port}/tcp`]?.[0]?.HostPort;
  if (binding === undefined) throw new Error(`container ${info.Name} has no host port for ${port}`);
  return Number(binding);
}

/** The user the node runs as: the harness's own, so files in the run folder stay the user's. */
function containerUser(): string | undefined {
  return typeof process.getuid === 'function' && typeof process.getgid === 'function' ? `${process.getuid()}:${process.getgid()}` : undefined;
}

/** Processes a node container may hold unless system.json says otherwise: enough for any system, too few for a fork bomb. */
const DEFAULT_PIDS = 256;

/**
 * Creates and starts one node container: the live host (bind-mounted read-only with
 * the system's source, at the same paths as on the host, so stack traces and the
 * debugger's source paths match) on the run's network, with its data folder mounted
 * read-write. Output is attached before the start, so no line is lost; the container
 * removes itself when it ends (also when the harness dies and the router with it).
 */
export async function startNodeContainer(spec: NodeContainerSpec): Promise<NodeContainer> {
  const { docker, limits } = spec;
  const ports = [STATE_PORT, ...(spec.inspect ? [INSPECT_PORT] : [])];
  const user = containerUser();
  const container = await docker.createContainer({
    name: spec.name,
    Image: spec.image,
    Hostname: spec.node,
    Cmd: ['node', ...(spec.inspect ? [`--inspect=0.0.0.0:${INSPECT_PORT}`] : []), spec.hostPath],
    WorkingDir: spec.sourceDir,
    Env: Object.entries({ ...spec.env, DDBENCH_STATE_LISTEN: `0.0.0.0:${STATE_PORT}` }).map(([k, v]) => `${k}=${v}`),
    Labels: { ...spec.labels, [LABEL.node]: spec.node },
    ...(user !== undefined && { User: user }),
    AttachStdout: true,
    AttachStderr: true,
    ExposedPorts: Object.fromEntries(ports.map((p) => [`${p}/tcp`, {}])),
    HostConfig: {
      AutoRemove: true,
      // A real init as pid 1 passes signals on and reaps, as on a host.
      Init: true,
      NetworkMode: spec.network,
      PortBindings: Object.fromEntries(ports.map((p) => [`${p}/tcp`, [{ HostIp: '127.0.0.1', HostPort: '' }]])),
      Mounts: [
        { Type: 'bind', Source: spec.sourceDir, Target: spec.sourceDir, ReadOnly: true },
        { Type: 'bind', Source: path.dirname(spec.hostPath), Target: path.dirname(spec.hostPath), ReadOnly: true },
        { Type: 'bind', Source: spec.dataDir, Target: spec.dataDir, ReadOnly: false },
      ],
      // The workspace's own runs (earlier trials, records) are not the node's to read.
      ...(fs.existsSync(path.join(spec.sourceDir, DDBENCH_DIR)) && { Tmpfs: { [path.join(spec.sourceDir, DDBENCH_DIR)]: 'ro' } }),
      // The node's code gets no capabilities (tc netem runs in a privileged exec instead), and cannot gain any.
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: limits.pids ?? DEFAULT_PIDS,
      ...(limits.memoryMb !== undefined && { Memory: limits.memoryMb * 1024 * 1024, MemorySwap: limits.memoryMb * 1024 * 1024 }),
      ...(limits.cpus !== undefined && { NanoCpus: Math.round(limits.cpus * 1e9) }),
    },
    NetworkingConfig: { EndpointsConfig: { [spec.network]: { Aliases: [spec.node] } } },
  });
  let started: Promise<NodeExit> | undefined;
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    docker.modem.demuxStream(stream, stdout, stderr);
    const outputDone = new Promise<void>((resolve) => {
      const end = () => {
        stdout.end();
        stderr.end();
        resolve();
      };
      stream.once('end', end);
      stream.once('close', end);
      stream.once('error', end);
    });
    const stderrTail = collectNodeOutput(stdout, stderr, { node: spec.node, now: spec.now, onEvent: spec.onEvent });
    // Asked before the start, so the end cannot slip by. The exit, not the removal, ends the node: a restart
    // starts the next incarnation (a container of its own name) while the engine still removes this one.
    const waited: Promise<{ StatusCode: number }> = container.wait({ condition: 'next-exit' });
    const removed = (container.wait({ condition: 'removed' }) as Promise<unknown>).then(
      () => undefined,
      () => undefined,
    );
    const closed = Promise.all([waited, outputDone]).then(
      ([result]) => exitOf(result.StatusCode, stderrTail),
      (err: unknown) => {
        stderrTail.push(`waiting for the container failed: ${err instanceof Error ? err.message : String(err)}`);
        return { code: null, signal: null, stderrTail };
      },
    );
    await container.start();
    started = closed;
    const info = await container.inspect();
    const ip = info.NetworkSettings.Networks[spec.network]?.IPAddress ?? '';
    return {
      container,
      name: spec.name,
      ip,
      ...(info.State.Pid > 0 && { pid: info.State.Pid }),
      statePort: hostPortOf(info, STATE_PORT),
      ...(spec.inspect && { inspectPort: hostPortOf(info, INSPECT_PORT) }),
      closed,
      removed,
    };
  } catch (err) {
    // A node that ended at once took its container with it: say why it ended, as the process backend does.
    if (started !== undefined && statusOf(err) === 404) throw new Error(`node ${spec.node} exited before connecting to the router (${describeExit(await started)})`);
    await idempotent(() => container.remove({ force: true }));
    throw err;
  }
}
