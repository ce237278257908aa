import * as os from 'node:os';
import * as path from 'node:path';

/** DDBench's cache folder: `DDBENCH_CACHE`, else `$XDG_CACHE_HOME/ddbench`, else ~/.cache/ddbench. */
export function cacheRoot(): string {
  if (process.env.DDBENCH_CACHE) return path.resolve(process.env.DDBENCH_CACHE);
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'ddbench');
}

/** Where one upstream system's builds and build caches live. */
export function upstreamCacheDir(system: string): string {
  return path.join(cacheRoot(), 'upstream', system);
}
