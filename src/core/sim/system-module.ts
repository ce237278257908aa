import { pathToFileURL } from 'node:url';
import { UserError } from '../errors';
import type { SystemModule } from '../../runtime/types';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Imports a system's entry module once per process (Node caches it by URL), so every
 * seed and node of a simulation shares one module: `createNode` must keep its state
 * per node, never in module-level variables.
 */
export async function loadSystemModule(entryFile: string): Promise<SystemModule> {
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(entryFile).href);
  } catch (err) {
    throw new UserError(`${entryFile}: cannot load the system (${err instanceof Error ? err.message : String(err)})`);
  }
  for (const candidate of [mod, isObject(mod) ? mod.default : undefined]) {
    if (isObject(candidate) && typeof candidate.createNode === 'function') return candidate as unknown as SystemModule;
  }
  throw new UserError(`${entryFile} does not export createNode(rt)`);
}
