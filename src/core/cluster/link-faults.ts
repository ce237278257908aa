import { seededRandom } from '../../runtime/random';
import { UserError } from '../errors';
import type { LinkFault } from './types';

/** The parts of a message fault rules look at. */
export interface MessageKey {
  msgId: string;
  from: string;
  to: string;
  type: string;
}

/** What the rules decided for one message. `dropRule` is the index of the rule that dropped it. */
export interface FaultDecision {
  dropRule?: number;
  duplicate: boolean;
  reorder: boolean;
  delayMs: number;
}

/** `*` matches any run of characters, so `*` is every endpoint and `n*` every node named n…. */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  if (!pattern.includes('*')) return pattern === value;
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`).test(value);
}

export function ruleMatches(rule: LinkFault, msg: MessageKey): boolean {
  return globMatch(rule.from, msg.from) && globMatch(rule.to, msg.to) && (rule.type === undefined || globMatch(rule.type, msg.type));
}

/** Throws on a rule whose probabilities or delay range make no sense. */
export function checkLinkFault(rule: LinkFault): void {
  for (const key of ['drop', 'duplicate', 'reorder'] as const) {
    const p = rule[key];
    if (p !== undefined && !(p >= 0 && p <= 1)) throw new Error(`link fault ${key} must be a probability in [0, 1], got ${p}`);
  }
  if (rule.delayMs !== undefined) {
    const [min, max] = rule.delayMs;
    if (!(min >= 0 && max >= min)) throw new Error(`link fault delayMs must be [min, max] with 0 <= min <= max, got [${min}, ${max}]`);
  }
}

/** How one matching rule draws its outcomes for one message. */
export interface RuleDraws {
  /** Whether an outcome of probability `p` happens. */
  chance(outcome: 'drop' | 'duplicate' | 'reorder', p: number): boolean;
  /** An extra delay in whole ms from [min, max]. */
  delayMs(min: number, max: number): number;
}

/**
 * Applies every matching rule in order, until one drops the message: its drop, then
 * duplicate and reorder chances, then its delay (the delays of all matching rules add
 * up). `draws` says where each matching rule's randomness comes from.
 */
export function applyRules(rules: readonly LinkFault[], msg: MessageKey, draws: (rule: number) => RuleDraws): FaultDecision {
  const decision: FaultDecision = { duplicate: false, reorder: false, delayMs: 0 };
  rules.forEach((rule, index) => {
    if (decision.dropRule !== undefined || !ruleMatches(rule, msg)) return;
    const draw = draws(index);
    if (draw.chance('drop', rule.drop ?? 0)) {
      decision.dropRule = index;
      return;
    }
    if (draw.chance('duplicate', rule.duplicate ?? 0)) decision.duplicate = true;
    if (draw.chance('reorder', rule.reorder ?? 0)) decision.reorder = true;
    if (rule.delayMs !== undefined) decision.delayMs += draw.delayMs(rule.delayMs[0], rule.delayMs[1]);
  });
  return decision;
}

/**
 * The live router's decisions. Each (message, rule) pair draws from its own generator
 * seeded by the run seed, the message id and the rule index, so a seed makes the same
 * decision for the same message however messages on other links interleave. Every rule
 * draws the same four numbers whatever its settings, keeping draws aligned.
 */
export function decideFaults(rules: readonly LinkFault[], msg: MessageKey, seed: number): FaultDecision {
  return applyRules(rules, msg, (index) => {
    const random = seededRandom(seed, 'router', msg.msgId, String(index));
    const [drop, duplicate, reorder, delay] = [random(), random(), random(), random()];
    const drawn = { drop, duplicate, reorder };
    return {
      chance: (outcome, p) => drawn[outcome] < p,
      delayMs: (min, max) => Math.round(min + delay * (max - min)),
    };
  });
}

/** Maps each endpoint to its partition group; throws if an endpoint is in two groups. */
export function partitionIndex(groups: readonly (readonly string[])[]): Map<string, number> {
  const index = new Map<string, number>();
  groups.forEach((group, g) => {
    for (const endpoint of group) {
      const existing = index.get(endpoint);
      if (existing !== undefined && existing !== g) throw new Error(`partition: ${endpoint} is in more than one group`);
      index.set(endpoint, g);
    }
  });
  return index;
}

/** Endpoints in no group keep all their links; two grouped endpoints talk only within a group. */
export function isCut(index: ReadonlyMap<string, number>, from: string, to: string): boolean {
  const a = index.get(from);
  const b = index.get(to);
  return a !== undefined && b !== undefined && a !== b;
}

/** What a person asks a link fault to do to the messages it matches. */
export type FaultEffect = 'delay' | 'drop' | 'duplicate';

/**
 * A person's amount for a link fault: a delay in ms ("2000", or a range "500-3000"), or the
 * share of messages to drop or duplicate (0 to 1). Throws a sentence on anything else.
 */
export function faultEffect(effect: FaultEffect, text: string): Pick<LinkFault, 'delayMs' | 'drop' | 'duplicate'> {
  if (effect === 'delay') {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(text);
    const min = Number(m?.[1]);
    const max = Number(m?.[2] ?? m?.[1]);
    if (!m || max < min) throw new UserError('a delay in ms: 2000, or a range such as 500-3000');
    return { delayMs: [min, max] };
  }
  const p = Number(text);
  if (text.trim() === '' || !(p >= 0 && p <= 1)) throw new UserError('a share between 0 and 1 (1: every message)');
  return effect === 'drop' ? { drop: p } : { duplicate: p };
}

/** "n1 → n2 (MsgApp): delay 2000-2000 ms". */
export function describeLinkFault(f: LinkFault): string {
  const effects = [
    ...(f.delayMs ? [`delay ${f.delayMs[0] === f.delayMs[1] ? f.delayMs[0] : `${f.delayMs[0]}-${f.delayMs[1]}`} ms`] : []),
    ...(f.drop !== undefined ? [`drop ${f.drop}`] : []),
    ...(f.duplicate !== undefined ? [`duplicate ${f.duplicate}`] : []),
    ...(f.reorder !== undefined ? [`reorder ${f.reorder}`] : []),
  ];
  return `${f.from} → ${f.to}${f.type ? ` (${f.type})` : ''}: ${effects.join(', ')}`;
}
