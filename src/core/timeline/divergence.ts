import { kindCode, type EventStore } from '../events/store';

export interface LaneDivergence {
  node: string;
  /** The first event of run a / run b that has no counterpart in the other, -1 when that run's lane ended first. */
  a: number;
  b: number;
}

export interface Divergence {
  /** The divergence earliest in run a's time, or null when the runs tell the same story. */
  first: LaneDivergence | null;
  lanes: LaneDivergence[];
}

const SEND = kindCode('send');
const RECV = kindCode('recv');

/**
 * What each node did, as a sequence of signatures (kind, level, message) of its
 * non-message events: logs, state changes, checks, faults, process events. Message
 * sends and receives are left out because their interleaving differs from run to run
 * (heartbeats, retries) even when nothing of consequence does; what the node decided
 * and logged is what a failing run does differently from a passing one.
 */
function story(store: EventStore, node: number): number[] {
  return Array.from(store.lanes[node]).filter((i) => store.kind[i] !== SEND && store.kind[i] !== RECV);
}

function signature(store: EventStore, i: number): string {
  return `${store.kind[i]}|${store.level[i]}|${store.text(i) ?? ''}`;
}

/** Where run b first departs from run a, lane by lane (lanes matched by node name). */
export function firstDivergence(a: EventStore, b: EventStore): Divergence {
  const lanes: LaneDivergence[] = [];
  for (let na = 0; na < a.nodes.length; na++) {
    const nb = b.nodeCode(a.nodes[na]);
    if (nb < 0) continue;
    const sa = story(a, na);
    const sb = story(b, nb);
    let k = 0;
    while (k < sa.length && k < sb.length && signature(a, sa[k]) === signature(b, sb[k])) k++;
    if (k === sa.length && k === sb.length) continue;
    lanes.push({ node: a.nodes[na], a: k < sa.length ? sa[k] : -1, b: k < sb.length ? sb[k] : -1 });
  }
  const when = (d: LaneDivergence): number => (d.a >= 0 ? a.ts[d.a] : d.b >= 0 ? b.ts[d.b] : Infinity);
  const first = lanes.reduce<LaneDivergence | null>((best, d) => (best === null || when(d) < when(best) ? d : best), null);
  return { first, lanes };
}
