/** A promise settled from outside: a node's readiness, which its hello or its exit decides. */
export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting when a node dies; that must not become an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
