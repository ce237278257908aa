import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { cancellationInstalled } from '../interrupt';
import { isAlive } from '../pid';

/**
 * Every process group a run starts is listed in a registry file with the harness's
 * pid, so that a harness that died without cleaning up (SIGKILL, crash) can have its
 * groups killed by the next run that starts (`reapLeftovers`).
 */

const RegistryRecord = z.object({
  harnessPid: z.number().int().positive(),
  runDir: z.string(),
  startedAt: z.string(),
  pgids: z.array(z.number().int().positive()),
});
type RegistryRecord = z.infer<typeof RegistryRecord>;

/** Marks a process as one of ours before the reaper kills it, in case its pid was reused. */
const HOST_MARKER = 'live-host';

export function registryDir(): string {
  return path.join(os.tmpdir(), 'ddbench', 'runs');
}

/** Sends `signal` to a whole process group; false if the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ESRCH') return false;
    throw err;
  }
}

const active = new Set<RunRegistry>();
let exitHooksInstalled = false;

/** Kills every live group of every open registry; synchronous, so it works inside process 'exit'. */
function killAllActive(): void {
  for (const registry of [...active]) {
    registry.killAllSync();
    registry.close();
  }
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllActive);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      // A cancellation (core/interrupt.ts) handles it: the run stops its own nodes, and
      // when the process exits (a second signal) the 'exit' hook kills what is left.
      if (signal !== 'SIGHUP' && cancellationInstalled()) return;
      killAllActive();
      // Our listener replaced the default action (exit); restore it unless someone else handles the signal.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** The registry file of one run. */
export class RunRegistry {
  readonly file: string;
  private readonly pgids = new Set<number>();
  private readonly startedAt = new Date().toISOString();

  constructor(
    runId: string,
    private readonly runDir: string,
  ) {
    fs.mkdirSync(registryDir(), { recursive: true });
    this.file = path.join(registryDir(), `${runId}.json`);
    installExitHooks();
    active.add(this);
    this.save();
  }

  add(pgid: number): void {
    this.pgids.add(pgid);
    this.save();
  }

  remove(pgid: number): void {
    if (this.pgids.delete(pgid)) this.save();
  }

  killAllSync(): void {
    for (const pgid of this.pgids) signalGroup(pgid, 'SIGKILL');
  }

  /** Forgets the run: removes the file. Call after its groups are gone. */
  close(): void {
    active.delete(this);
    fs.rmSync(this.file, { force: true });
  }

  private save(): void {
    if (!active.has(this)) return;
    const record: RegistryRecord = { harnessPid: process.pid, runDir: this.runDir, startedAt: this.startedAt, pgids: [...this.pgids] };
    // Write-then-rename, so the reaper never reads half a file.
    const temp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(record));
    fs.renameSync(temp, this.file);
  }
}

/**
 * On Linux, checks that a live group leader is a live host; elsewhere trusts the
 * registry. A leader that is gone may still have group members, which are ours.
 */
function isOurGroup(pgid: number): boolean {
  if (!fs.existsSync('/proc/self')) return true;
  try {
    return fs.readFileSync(`/proc/${pgid}/cmdline`, 'utf8').includes(HOST_MARKER);
  } catch {
    return true;
  }
}

export interface ReapReport {
  /** Registry files of dead harnesses that were removed. */
  files: string[];
  /** Process groups that were still alive and got SIGKILL. */
  killed: number[];
}

/** Kills the process groups of every run whose harness is no longer alive, and removes their registry files. */
export function reapLeftovers(dir = registryDir()): ReapReport {
  const report: ReapReport = { files: [], killed: [] };
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return report;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    let record: RegistryRecord;
    try {
      record = RegistryRecord.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
    } catch {
      // Files are written by rename, so an unreadable one is not ours to interpret; leave it.
      continue;
    }
    if (record.harnessPid === process.pid || isAlive(record.harnessPid)) continue;
    for (const pgid of record.pgids) {
      if (isOurGroup(pgid) && signalGroup(pgid, 'SIGKILL')) report.killed.push(pgid);
    }
    fs.rmSync(file, { force: true });
    report.files.push(file);
  }
  return report;
}
