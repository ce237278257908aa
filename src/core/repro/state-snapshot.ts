import * as fs from 'node:fs';
import type { Cluster } from '../cluster/types';
import type { Json } from '../../runtime/types';
import { redact } from '../secrets';

/** What each node's debug-state endpoint said when a trial ended, or why it could not say. */
export type StateSnapshot = Record<string, { state: Json } | { error: string }>;

export const STATE_FILE = 'state.json';

/**
 * Asks every node for its state before the cluster is stopped, so the state at the
 * failure can be read later (the agent's context bundle and its node_state tool).
 * A node that is down or paused is recorded with the reason, never fatal.
 */
export async function writeStateSnapshot(cluster: Cluster, nodes: readonly string[], file: string): Promise<void> {
  const entries = await Promise.all(
    nodes.map(async (node) => {
      try {
        return [node, { state: await cluster.state(node) }] as const;
      } catch (err) {
        return [node, { error: err instanceof Error ? err.message : String(err) }] as const;
      }
    }),
  );
  const snapshot: StateSnapshot = Object.fromEntries(entries);
  fs.writeFileSync(file, redact(JSON.stringify(snapshot, null, 2)) + '\n');
}
