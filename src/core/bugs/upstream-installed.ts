import * as fs from 'node:fs';
import { findSystem, type BugEntry, type Catalog, type SystemEntry } from './catalog';
import { UserError } from '../errors';

/**
 * Why a real upstream system cannot run here yet (its Debian source is not installed), with
 * the step that installs it; undefined when it is there or for a miniature.
 */
export function upstreamMissing(system: SystemEntry): string | undefined {
  const spec = system.manifest.upstream;
  if (spec === undefined || fs.existsSync(spec.tree)) return undefined;
  return `${system.id} ${spec.version} is not installed (its source ${spec.tree} comes from ${spec.debian.source.package} ${spec.debian.source.version}): run \`sudo ddbench setup upstream\``;
}

/**
 * Refuses, before anything runs, bugs whose real upstream system is not installed here,
 * naming each and the two ways on: install it, or leave the pilot tier out.
 */
export function requireInstalled(catalog: Catalog, bugs: readonly BugEntry[]): void {
  const missing = bugs.flatMap((b) => {
    const why = b.kind === 'upstream' ? upstreamMissing(findSystem(catalog, b.system)) : undefined;
    return why === undefined ? [] : [`${b.id}: ${why}`];
  });
  if (missing.length > 0) throw new UserError(`${missing.join('\n')}\n(or leave the bugs in real upstream code out: --kind miniature)`);
}
