/**
 * Runs one node of a bug system as a real process: `node dist/runtime/live-host.js`
 * with the DDBENCH_* environment (host-env.ts). Messages go through the router over
 * one connection (a Unix socket on the process backend, TCP from a container); events go to stdout as JSON lines for the cluster to collect.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { FsStore } from './fs-store';
import { parseHostEnv, type HostEnv } from './host-env';
import { readLines } from './ndjson';
import { createNodeRuntime, type NodeRuntimeHandle } from './node-runtime';
import type { RuntimeEvent } from './runtime-event';
import { startStateServer } from './state-server';
import type { SystemModule } from './types';
import { decodeFrame, encodeFrame, FromRouterFrame } from './wire';

/** Exit codes the cluster can tell apart. */
const EXIT_CRASH = 1;
const EXIT_BAD_ENV = 2;
const EXIT_ROUTER_GONE = 3;

function fail(message: string, code: number): never {
  process.stderr.write(`ddbench live host: ${message}\n`);
  process.exit(code);
}

async function loadSystem(entry: string): Promise<SystemModule> {
  const mod: unknown = await import(pathToFileURL(entry).href);
  const candidates = [mod, isObject(mod) ? mod.default : undefined];
  for (const candidate of candidates) {
    if (isObject(candidate) && typeof candidate.createNode === 'function') return candidate as unknown as SystemModule;
  }
  throw new Error(`${entry} does not export createNode(rt)`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function connect(router: HostEnv['DDBENCH_ROUTER']): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = 'path' in router ? net.connect(router.path) : net.connect(router.port, router.host);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function emit(event: RuntimeEvent): void {
  // stdout to a pipe is synchronous on Linux, so events written before a crash are not lost.
  process.stdout.write(JSON.stringify(event) + '\n');
}

async function main(): Promise<void> {
  const parsed = parseHostEnv(process.env);
  if (!parsed.ok) fail(`bad environment:\n${parsed.error}`, EXIT_BAD_ENV);
  const env = parsed.env;
  const nodeId = env.DDBENCH_NODE_ID;

  let runtime: NodeRuntimeHandle | undefined;
  const crash = (err: unknown): void => {
    if (runtime !== undefined) runtime.reportCrash(err);
    fail(`node ${nodeId} crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, EXIT_CRASH);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  const { port: statePort } = await startStateServer(() => (runtime === undefined ? null : runtime.state()), env.DDBENCH_STATE_LISTEN);
  const system = await loadSystem(env.DDBENCH_ENTRY);
  const socket = await connect(env.DDBENCH_ROUTER);
  socket.setNoDelay(true);
  socket.on('error', () => {
    // 'close' follows, and says why the node stops.
  });
  socket.on('close', () => fail(`node ${nodeId}: router connection closed, exiting`, EXIT_ROUTER_GONE));

  const startRuntime = (): void => {
    const handle = createNodeRuntime({
      id: nodeId,
      nodes: env.DDBENCH_NODES,
      config: env.DDBENCH_CONFIG,
      seed: env.DDBENCH_SEED,
      srcRoot: env.DDBENCH_SRC_ROOT,
      incarnation: env.DDBENCH_INCARNATION,
      vcStart: env.DDBENCH_VC_START,
      host: {
        wallClockMs: () => Date.now(),
        eventTime: () => Math.round((performance.timeOrigin + performance.now() - env.DDBENCH_T0) * 1000),
        setTimer(ms, fn) {
          const timer = setTimeout(fn, ms);
          return { cancel: () => clearTimeout(timer) };
        },
        transmit: (frame) => socket.write(encodeFrame(frame)),
        emit,
        store: new FsStore(env.DDBENCH_DATA_DIR),
      },
    });
    // Assigned before createNode so a crash during start is reported as an event.
    runtime = handle;
    system.createNode(handle.rt).start();
  };

  readLines(socket, (line) => {
    const decoded = decodeFrame(FromRouterFrame, line);
    if (!decoded.ok) fail(`bad frame from router: ${decoded.error}`, EXIT_CRASH);
    const frame = decoded.frame;
    if (frame.t === 'welcome') {
      if (runtime === undefined) startRuntime();
      return;
    }
    if (runtime === undefined) fail(`router sent ${frame.t} before welcome`, EXIT_CRASH);
    if (frame.t === 'msg') runtime.deliver(frame);
    else runtime.setSkew(frame.offsetMs);
  });
  socket.write(encodeFrame({ t: 'hello', node: nodeId, role: 'node', ...(statePort !== undefined && { statePort }), pid: process.pid, incarnation: env.DDBENCH_INCARNATION }));
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err), EXIT_CRASH));
