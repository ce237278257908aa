import fs from 'node:fs';
import path from 'node:path';
import { bwrapProgram, localIsolation, nodePermissionFlags } from './isolation';

/** What one sandboxed Node.js program may see and use. */
export interface SandboxSpec {
  /** The script node runs; visible read-only. */
  script: string;
  args?: string[];
  /** Node options before the script (--inspect, say). */
  nodeArgs?: string[];
  /** Folders and files visible read-only, at their own paths. */
  readOnly: string[];
  /** Folders (and Unix sockets) visible read-write, at their own paths. */
  readWrite: string[];
  /** Paths inside the visible folders that stay hidden (a workspace's own runs, say). */
  hide?: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * A debugger will attach to the inspector: the sandbox shares the host's network so
   * it can, and Node's permission model (which turns the inspector off) stays off.
   */
  debuggable?: boolean;
  /** The program may start worker threads (the simulator's pool does). */
  workers?: boolean;
  limits?: { cpuSeconds?: number; heapMb?: number };
}

export interface SandboxCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  isolation: 'bwrap' | 'node-permission' | 'none';
}

/** System folders a Node.js binary needs; on merged-/usr systems the top-level ones are links. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const SYSTEM_FILES = ['/etc/ld.so.cache', '/etc/localtime'];

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The folder holding the Node.js binary (Electron's whole folder, whose libraries sit beside it). */
function runtimeDir(): string {
  return path.dirname(real(process.execPath));
}

/**
 * The system folders and files, read-only at their own paths, that any program in a
 * bubblewrap sandbox needs; `visible` lists the folders bound. Whatever of `hidden` (the
 * harness, the bug set) lies under one of them stays out of sight.
 */
export function bwrapSystemBinds(hidden: readonly string[] = []): { args: string[]; visible: string[] } {
  const args: string[] = [];
  const visible: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (stat.isDirectory()) {
      args.push('--ro-bind', dir, dir);
      visible.push(dir);
    }
  }
  for (const file of SYSTEM_FILES) args.push('--ro-bind-try', file, file);
  const runtime = runtimeDir();
  for (const h of hidden.map(real)) if (visible.some((v) => within(h, v)) && !within(runtime, h)) args.push('--tmpfs', h);
  return { args, visible };
}

function bwrapArgs(spec: SandboxSpec, hidden: string[]): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--clearenv'];
  if (spec.debuggable === true) args.push('--share-net');
  const system = bwrapSystemBinds(hidden);
  args.push(...system.args);
  const runtime = runtimeDir();
  if (!system.visible.some((v) => within(runtime, v))) {
    args.push('--ro-bind', runtime, runtime);
    for (const h of hidden) if (within(h, runtime) && !within(runtime, h)) args.push('--tmpfs', h);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  for (const p of spec.readOnly) args.push('--ro-bind', real(p), real(p));
  for (const h of spec.hide ?? []) if (fs.existsSync(h)) args.push('--tmpfs', real(h));
  for (const p of spec.readWrite) args.push('--bind', real(p), real(p));
  args.push('--ro-bind', real(spec.script), real(spec.script));
  for (const [k, v] of Object.entries(spec.env)) args.push('--setenv', k, v);
  args.push('--chdir', real(spec.cwd));
  return args;
}

/** Node's own limits on what the program may touch, on top of (or instead of) the sandbox. */
function permissionArgs(spec: SandboxSpec): string[] {
  const flags = nodePermissionFlags();
  if (flags === undefined) return [];
  const read = [spec.script, ...spec.readOnly, ...spec.readWrite];
  return [
    flags.enable,
    ...flags.quiet,
    ...read.map((p) => `--allow-fs-read=${p}`),
    ...spec.readWrite.map((p) => `--allow-fs-write=${p}`),
    ...(spec.workers === true ? ['--allow-worker'] : []),
  ];
}

/**
 * The command that runs `node <script>` under the strongest isolation available here
 * (isolation.ts): bubblewrap with Node's permission model inside, else the permission
 * model alone, else plain Node. The environment is exactly `spec.env`. CPU time is
 * bounded by RLIMIT_CPU through the shell's ulimit (exceeding it ends the process with
 * SIGXCPU), memory by V8's heap limit.
 */
export function sandboxCommand(spec: SandboxSpec, hidden: string[] = []): SandboxCommand {
  const available = localIsolation();
  const isolation = available === 'node-permission' && spec.debuggable === true ? 'none' : available;
  const script = real(spec.script);
  const heap = spec.limits?.heapMb !== undefined ? [`--max-old-space-size=${spec.limits.heapMb}`] : [];
  const permission = isolation === 'none' || spec.debuggable === true ? [] : permissionArgs(spec);
  const node = [process.execPath, ...heap, ...permission, ...(spec.nodeArgs ?? []), script, ...(spec.args ?? [])];
  const cpu = spec.limits?.cpuSeconds;
  // `exec` keeps the pid, so the process the harness holds is the node itself (or bwrap).
  const limited = cpu !== undefined && process.platform !== 'win32' ? ['/bin/sh', '-c', `ulimit -t ${Math.ceil(cpu)} && exec "$@"`, 'sh', ...node] : node;
  const env = { ...spec.env, ELECTRON_RUN_AS_NODE: '1' };
  if (isolation === 'bwrap') {
    const program = bwrapProgram() as string;
    return { command: program, args: [...bwrapArgs({ ...spec, env }, hidden.map(real)), '--', ...limited], env: {}, cwd: spec.cwd, isolation };
  }
  const [command, ...args] = limited as [string, ...string[]];
  return { command, args, env, cwd: spec.cwd, isolation };
}
