/**
 * One thing that happens at a virtual instant. Ties on `time` go by `seq`, the order
 * of scheduling. The entry is its own cancel handle: a seed schedules thousands of
 * them, and a handle object with a closure each was a measurable share of a seed.
 */
export class QueueEntry {
  constructor(
    readonly time: number,
    readonly seq: number,
    public cancelled: boolean,
    readonly run: () => void,
  ) {}

  cancel(): void {
    this.cancelled = true;
  }
}

function before(a: QueueEntry, b: QueueEntry): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/** A binary min-heap of entries by (time, seq); cancelled entries are skipped lazily on pop. */
export class EventQueue {
  private readonly heap: QueueEntry[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(entry: QueueEntry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  /** The earliest live entry, without removing it. */
  peek(): QueueEntry | undefined {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.removeTop();
    return this.heap[0];
  }

  pop(): QueueEntry | undefined {
    const top = this.peek();
    if (top !== undefined) this.removeTop();
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private removeTop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}
