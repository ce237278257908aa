import type { EventStore } from '../events/store';
import type { LaneMeta, LaneRole } from './protocol';

const ROLE_ORDER: Record<LaneRole, number> = { harness: 0, node: 1, client: 2, router: 3 };

/** What a lane stands for, from the names the runtime and the cluster give endpoints. */
export function laneRole(node: string): LaneRole {
  if (node === 'harness') return 'harness';
  if (node === 'router') return 'router';
  if (/^client/.test(node)) return 'client';
  return 'node';
}

const collator = new Intl.Collator('en', { numeric: true });

/**
 * A run's lanes top to bottom: the harness (faults it injects, checks) first, then
 * the system's nodes, the clients, and the router last; natural order within each
 * (n2 before n10).
 */
export function laneOrder(store: EventStore): { lanes: LaneMeta[]; laneOfNode: Int32Array } {
  const codes = store.nodes.map((_, code) => code);
  codes.sort((a, b) => {
    const ra = ROLE_ORDER[laneRole(store.nodes[a])];
    const rb = ROLE_ORDER[laneRole(store.nodes[b])];
    return ra !== rb ? ra - rb : collator.compare(store.nodes[a], store.nodes[b]);
  });
  const laneOfNode = new Int32Array(store.nodes.length).fill(-1);
  const lanes = codes
    .filter((code) => store.lanes[code].length > 0)
    .map((code, lane) => {
      laneOfNode[code] = lane;
      const name = store.nodes[code];
      return { name, role: laneRole(name), events: store.lanes[code].length };
    });
  return { lanes, laneOfNode };
}
