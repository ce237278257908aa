import { z } from 'zod';
import type { Event } from '../events/event';

/**
 * The faults a run injected, by kind. Node-level kinds: a partition (or link faults
 * that cut a node or group off: every message dropped, whatever its type), a crash
 * (a kill, with or without a restart) and a pause. Message-level kinds: drop, delay,
 * duplicate and reorder rules that leave the link up; and clock skew.
 */
export const FaultKind = z.enum(['partition', 'isolate', 'crash', 'pause', 'drop', 'delay', 'duplicate', 'reorder', 'skew']);
export type FaultKind = z.infer<typeof FaultKind>;

/** Kinds in a fixed order, so a profile reads the same in every bug.json. */
export const FaultProfile = z.array(FaultKind).refine((kinds) => kinds.every((k, i) => i === 0 || FaultKind.options.indexOf(kinds[i - 1] as FaultKind) < FaultKind.options.indexOf(k)), 'kinds must be unique and in the order ' + FaultKind.options.join(', '));
export type FaultProfile = z.infer<typeof FaultProfile>;

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** The kinds of one harness-injected event, if it injected anything. */
function kindsOf(e: Pick<Event, 'kind' | 'node' | 'msg' | 'fields'>): FaultKind[] {
  if (e.kind === 'proc') return e.msg === 'kill' || e.msg === 'restart' ? ['crash'] : e.msg === 'pause' ? ['pause'] : [];
  if (e.kind !== 'fault') return [];
  if (e.msg === 'partition') return ['partition'];
  if (e.msg === 'clock skew') return ['skew'];
  if (e.msg !== 'link fault') return [];
  const f = e.fields ?? {};
  // Every message of the link lost: the node (or group) is cut off, as by a partition.
  if (num(f.drop) >= 1 && f.type === undefined) return ['isolate'];
  const kinds: FaultKind[] = [];
  if (num(f.drop) > 0) kinds.push('drop');
  if (Array.isArray(f.delayMs) && f.delayMs.some((ms) => num(ms) > 0)) kinds.push('delay');
  if (num(f.duplicate) > 0) kinds.push('duplicate');
  if (num(f.reorder) > 0) kinds.push('reorder');
  return kinds;
}

/** The fault profile of a run, from its events (the harness's fault and proc events; the router's own drops are consequences, not faults). */
export function faultProfile(events: Iterable<Pick<Event, 'kind' | 'node' | 'msg' | 'fields'>>): FaultProfile {
  const seen = new Set<FaultKind>();
  for (const e of events) for (const k of kindsOf(e)) seen.add(k);
  return FaultKind.options.filter((k) => seen.has(k));
}

/**
 * The tier a profile gives: 1 with message-level faults only (or none); 2 with one
 * kind of node-level fault (a cut network, a crash, or a pause); 3 with two or more.
 */
export function tierOf(profile: FaultProfile): 1 | 2 | 3 {
  const nodeLevel = new Set(profile.flatMap((k) => (k === 'partition' || k === 'isolate' ? ['network'] : k === 'crash' || k === 'pause' ? [k] : [])));
  return nodeLevel.size === 0 ? 1 : nodeLevel.size === 1 ? 2 : 3;
}
