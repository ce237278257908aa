import type { DurableStore } from '../../runtime/disk';

/** A node's synced files, kept in memory: they outlive the node's simulated crashes, as a disk would. */
export class MemoryStore implements DurableStore {
  private readonly files = new Map<string, string>();

  read(file: string): string | undefined {
    return this.files.get(file);
  }

  list(): string[] {
    return [...this.files.keys()].sort();
  }

  replace(file: string, data: string): void {
    this.files.set(file, data);
  }

  append(file: string, data: string): void {
    this.files.set(file, (this.files.get(file) ?? '') + data);
  }

  remove(file: string): void {
    this.files.delete(file);
  }
}
