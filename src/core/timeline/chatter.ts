import type { EventStore } from '../events/store';
import type { Arrows } from './overlays';

/** A message type needs this many messages before it can be chatter. */
const MIN_MESSAGES = 24;
/** A link carries a type periodically when this share of its gaps is within [½, 2] × the median gap. */
const STEADY_SHARE = 0.6;
const MIN_SENDS_PER_LINK = 5;

export interface Chatter {
  /** 1 for each arrow whose message type is chatter. */
  arrow: Uint8Array;
  /** The chatter types, most messages first. */
  types: string[];
}

/**
 * The messages that repeat at a steady pace — heartbeats, gossip rounds, pings — which
 * in a wide view are a wall of arrows hiding the few that matter. A type is chatter when
 * most of its messages travel links that carry it at a regular interval. Dropped,
 * delayed and duplicated messages are never chatter: the harness did something to them.
 */
export function chatterOf(store: EventStore, arrows: Arrows): Chatter {
  const byType = new Map<number, number[]>();
  for (let a = 0; a < arrows.size; a++) {
    const type = store.msg[arrows.send[a]];
    if (type < 0) continue;
    let list = byType.get(type);
    if (list === undefined) byType.set(type, (list = []));
    list.push(a);
  }
  const arrow = new Uint8Array(arrows.size);
  const types: { name: string; n: number }[] = [];
  for (const [type, list] of byType) {
    if (list.length < MIN_MESSAGES || !isSteady(store, arrows, list)) continue;
    types.push({ name: store.texts[type], n: list.length });
    for (const a of list) if (arrows.flags[a] === 0) arrow[a] = 1;
  }
  return { arrow, types: types.sort((x, y) => y.n - x.n).map((t) => t.name) };
}

/** Whether most of these messages go over links (sender → receiver) that carry them at a steady interval. */
function isSteady(store: EventStore, arrows: Arrows, list: readonly number[]): boolean {
  // Per link, not per sender: a broadcast sends several at once, and those gaps of zero say nothing.
  const byLink = new Map<number, number[]>();
  for (const a of list) {
    const s = arrows.send[a];
    const link = store.node[s] * store.nodes.length + arrows.toNode[a];
    let times = byLink.get(link);
    if (times === undefined) byLink.set(link, (times = []));
    times.push(store.ts[s]);
  }
  let steady = 0;
  for (const times of byLink.values()) {
    if (times.length < MIN_SENDS_PER_LINK) continue;
    times.sort((x, y) => x - y);
    const gaps = times.slice(1).map((t, k) => t - times[k]!);
    const median = [...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)]!;
    if (!(median > 0)) continue;
    const regular = gaps.filter((g) => g >= median / 2 && g <= median * 2).length;
    if (regular / gaps.length >= STEADY_SHARE) steady += times.length;
  }
  return steady * 2 >= list.length;
}
