/**
 * Runs `work` over `items` with at most `limit` at once, results in the items' order.
 * Items not yet started when `signal` aborts are skipped: the results are then those of
 * the items that ran, still in order (callers read them as complete results).
 */
export async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  // `filter` skips the slots of skipped items.
  return results.filter(() => true);
}
