import fs from 'node:fs';
import path from 'node:path';
import type { DurableStore } from './disk';

/** Suffix of the temporary file a replace writes before renaming it into place. */
const TEMP_SUFFIX = '.ddbench-tmp';

/** A DurableStore in a real folder: every change is fsynced before the call returns. */
export class FsStore implements DurableStore {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  read(file: string): string | undefined {
    try {
      return fs.readFileSync(this.resolve(file), 'utf8');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  list(): string[] {
    const found: string[] = [];
    const walk = (rel: string): void => {
      for (const entry of fs.readdirSync(path.join(this.dir, rel), { withFileTypes: true })) {
        const name = rel === '' ? entry.name : `${rel}/${entry.name}`;
        if (entry.isDirectory()) walk(name);
        else if (entry.isFile() && !entry.name.endsWith(TEMP_SUFFIX)) found.push(name);
      }
    };
    walk('');
    return found.sort();
  }

  /** Writes a temporary file, fsyncs it and renames it, so a crash leaves the old or the new content. */
  replace(file: string, data: string): void {
    const target = this.resolve(file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const temp = target + TEMP_SUFFIX;
    writeDurably(temp, 'w', data);
    fs.renameSync(temp, target);
    fsyncDir(path.dirname(target));
  }

  append(file: string, data: string): void {
    const target = this.resolve(file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeDurably(target, 'a', data);
    fsyncDir(path.dirname(target));
  }

  remove(file: string): void {
    const target = this.resolve(file);
    fs.rmSync(target, { force: true });
    fsyncDir(path.dirname(target));
  }

  private resolve(file: string): string {
    return path.join(this.dir, ...file.split('/'));
  }
}

/**
 * Node 20's permission model refuses fsync outright. The nodes it guards only ever
 * crash by being killed, and the kernel keeps what a killed process wrote, so there
 * the written data is as durable as any fault the harness injects can tell.
 */
let fsyncRefused = false;

function fsync(fd: number): void {
  if (fsyncRefused) return;
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'ERR_ACCESS_DENIED')) throw err;
    fsyncRefused = true;
  }
}

function writeDurably(file: string, flags: 'w' | 'a', data: string): void {
  const fd = fs.openSync(file, flags);
  try {
    fs.writeSync(fd, data);
    fsync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes a create, rename or unlink durable; not every platform can fsync a folder, which is then skipped. */
function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fsync(fd);
  } catch {
    // Windows cannot open folders for fsync; the file's own fsync is the best available there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && 'code' in err && (err.code === 'ENOENT' || err.code === 'ENOTDIR');
}
