import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors';
import { meetsIsolation, type Isolation } from './levels';

/** The process backend's levels; DDBENCH_ISOLATION may ask for one (then it must be available). */
const LocalIsolation = z.enum(['bwrap', 'node-permission', 'none']);
type LocalIsolation = z.infer<typeof LocalIsolation>;

function onPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The Node flags that turn on the permission model in this runtime, if it has one. */
export interface PermissionFlags {
  enable: string;
  /** Keeps the model's experimental warning out of the node's stderr (it would read as an error). */
  quiet: string[];
}

let permissionFlags: PermissionFlags | null | undefined;

export function nodePermissionFlags(): PermissionFlags | undefined {
  if (permissionFlags === undefined) {
    const flags = process.allowedNodeEnvironmentFlags;
    const enable = flags.has('--permission') ? '--permission' : flags.has('--experimental-permission') ? '--experimental-permission' : undefined;
    const quiet = enable === '--experimental-permission' ? [flags.has('--disable-warning') ? '--disable-warning=ExperimentalWarning' : '--no-warnings'] : [];
    permissionFlags = enable === undefined ? null : { enable, quiet };
  }
  return permissionFlags ?? undefined;
}

let bwrap: { path: string } | { missing: string } | undefined;

/**
 * bubblewrap, when it is installed and can make the namespaces here (a container
 * without user namespaces, or a kernel that forbids them to this user, cannot).
 */
export function bwrapProgram(): string | undefined {
  if (bwrap === undefined) {
    const found = process.platform === 'linux' ? onPath('bwrap') : undefined;
    if (found === undefined) bwrap = { missing: 'bwrap is not installed (Debian/Ubuntu: apt install bubblewrap)' };
    else {
      try {
        execFileSync(found, ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--', process.execPath, '-e', ''], {
          stdio: 'ignore',
          timeout: 10_000,
          env: { ELECTRON_RUN_AS_NODE: '1' },
        });
        bwrap = { path: found };
      } catch (err) {
        bwrap = { missing: `${found} cannot make namespaces here (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
      }
    }
  }
  return 'path' in bwrap ? bwrap.path : undefined;
}

function whyNoBwrap(): string {
  bwrapProgram();
  return bwrap !== undefined && 'missing' in bwrap ? bwrap.missing : 'bwrap is available';
}

/**
 * The isolation local runs of submitted code get: the strongest this machine allows,
 * or the one DDBENCH_ISOLATION names (an error if it is not available, so a study
 * never runs weaker than it asked without knowing).
 */
export function localIsolation(env: NodeJS.ProcessEnv = process.env): LocalIsolation {
  const asked = env.DDBENCH_ISOLATION;
  if (asked !== undefined && asked !== '') {
    const parsed = LocalIsolation.safeParse(asked);
    if (!parsed.success) throw new UserError(`DDBENCH_ISOLATION=${asked} is not one of ${LocalIsolation.options.join(', ')}`);
    if (parsed.data === 'bwrap' && bwrapProgram() === undefined) throw new UserError(`DDBENCH_ISOLATION=bwrap, but ${whyNoBwrap()}`);
    if (parsed.data === 'node-permission' && nodePermissionFlags() === undefined) throw new UserError(`DDBENCH_ISOLATION=node-permission, but ${process.execPath} has no permission model (Node.js 20 or later has it)`);
    return parsed.data;
  }
  if (bwrapProgram() !== undefined) return 'bwrap';
  return nodePermissionFlags() !== undefined ? 'node-permission' : 'none';
}

/** Fails with a clear message when this machine's isolation is weaker than `wanted`. */
export function requireIsolation(got: Isolation, wanted: Isolation | undefined, what: string): void {
  if (wanted === undefined || meetsIsolation(got, wanted)) return;
  const hint = got === 'none' || got === 'node-permission' ? `; ${whyNoBwrap()}` : '';
  throw new UserError(`${what} requires isolation ${wanted}, but runs here get ${got}${hint}`);
}
