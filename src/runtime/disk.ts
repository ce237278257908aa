import type { Disk } from './types';

/**
 * Where a node's synced files live. The live host keeps them in a real folder
 * (fs-store.ts); a simulated run can keep them in memory across simulated crashes.
 * Every mutating call must be durable when it returns.
 */
export interface DurableStore {
  read(file: string): string | undefined;
  list(): string[];
  replace(file: string, data: string): void;
  append(file: string, data: string): void;
  remove(file: string): void;
}

/** A not-yet-synced change to one file; appends stay appends so sync need not rewrite whole logs. */
type PendingChange = { kind: 'replace'; data: string } | { kind: 'append'; data: string } | { kind: 'remove' };

const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._-]+$/;

/** File names are relative paths of plain segments, so a system cannot escape its data folder. */
function checkFileName(file: string): void {
  if (!file.split('/').every((segment) => SEGMENT.test(segment))) {
    throw new Error(`invalid file name ${JSON.stringify(file)}: use relative paths of letters, digits, '.', '_' and '-'`);
  }
}

/**
 * The `Disk` a system sees: writes are held in memory until `sync`, and reads see
 * them, so a process killed before `sync` loses exactly its unsynced writes.
 */
export class BufferedDisk implements Disk {
  private readonly pending = new Map<string, PendingChange>();

  constructor(private readonly store: DurableStore) {}

  read(file: string): string | undefined {
    checkFileName(file);
    const change = this.pending.get(file);
    if (change === undefined) return this.store.read(file);
    switch (change.kind) {
      case 'replace':
        return change.data;
      case 'remove':
        return undefined;
      case 'append':
        return (this.store.read(file) ?? '') + change.data;
    }
  }

  write(file: string, data: string): void {
    checkFileName(file);
    this.pending.set(file, { kind: 'replace', data });
  }

  append(file: string, data: string): void {
    checkFileName(file);
    const change = this.pending.get(file);
    if (change === undefined) this.pending.set(file, { kind: 'append', data });
    else if (change.kind === 'remove') this.pending.set(file, { kind: 'replace', data });
    else change.data += data;
  }

  remove(file: string): void {
    checkFileName(file);
    this.pending.set(file, { kind: 'remove' });
  }

  list(): string[] {
    const names = new Set(this.store.list());
    for (const [file, change] of this.pending) {
      if (change.kind === 'remove') names.delete(file);
      else names.add(file);
    }
    return [...names].sort();
  }

  sync(): void {
    for (const [file, change] of this.pending) {
      if (change.kind === 'replace') this.store.replace(file, change.data);
      else if (change.kind === 'append') this.store.append(file, change.data);
      else this.store.remove(file);
    }
    this.pending.clear();
  }
}
