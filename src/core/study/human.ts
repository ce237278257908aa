import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { consentHash } from './participant';
import { patchStat } from './patch-metrics';
import { SCHEMA_VERSION, type AttemptRecord, type Interaction, type InteractionRecord, type Verification } from './schema';
import { appendRecords, ATTEMPTS_FILE, readRecordsFile } from './store';

export interface HumanAttemptStart {
  /** The workspace's records folder. */
  recordsDir: string;
  bug: { id: string; system: string; tier: 1 | 2 | 3 };
  participant: string;
  study?: string;
  /** The consent text shown and agreed to, and whether the interaction log was agreed to as well. */
  consent: { text: string; interactionLog: boolean };
  agentAllowed: boolean;
  hintsAllowed: boolean;
  /** The workspace already differed from the bug's code at the start. */
  startedFromEdits: boolean;
  timeLimitMs?: number;
  toolVersion: string;
  now?: () => Date;
}

export type EndStatus = 'gave-up' | 'timed-out' | 'abandoned';

/**
 * A person's attempt at a bug, as the records see it. The editor drives it (start,
 * note what the person does, submit, give up, time out); every change is appended
 * to the records at once, as a new revision, so closing or crashing the editor loses
 * nothing, and the next window picks the attempt up again (`resume`).
 */
export class HumanAttempt {
  private nextSeq: number;

  private constructor(
    private readonly file: string,
    private state: AttemptRecord,
    private readonly logInteractions: boolean,
    nextSeq: number,
    private readonly now: () => Date,
  ) {
    this.nextSeq = nextSeq;
  }

  static start(o: HumanAttemptStart): HumanAttempt {
    const now = o.now ?? (() => new Date());
    const at = now().toISOString();
    const record: AttemptRecord = {
      v: SCHEMA_VERSION,
      type: 'attempt',
      id: randomUUID(),
      revision: 0,
      bug: o.bug,
      actor: {
        kind: 'human',
        participant: o.participant,
        ...(o.study && { study: o.study }),
        consent: { at, textSha256: consentHash(o.consent.text), interactionLog: o.consent.interactionLog },
        agentAllowed: o.agentAllowed,
        hintsAllowed: o.hintsAllowed,
      },
      status: 'in-progress',
      startedAt: at,
      ...(o.timeLimitMs !== undefined && { timeLimitMs: o.timeLimitMs }),
      verifications: [],
      attempts: 0,
      patch: null,
      hints: [],
      startedFromEdits: o.startedFromEdits,
      tool: { name: 'ddbench', version: o.toolVersion },
    };
    const file = path.join(o.recordsDir, ATTEMPTS_FILE);
    appendRecords(file, [record]);
    return new HumanAttempt(file, record, o.consent.interactionLog, 0, now);
  }

  /** The person's attempt still in progress in this records folder (the latest one, if a crash left several). */
  static resume(recordsDir: string, now: () => Date = () => new Date()): HumanAttempt | undefined {
    const file = path.join(recordsDir, ATTEMPTS_FILE);
    if (!fs.existsSync(file)) return undefined;
    const { lines } = readRecordsFile(file);
    const latest = new Map<string, AttemptRecord>();
    const seqs = new Map<string, number>();
    for (const l of lines) {
      if (l.type === 'interaction') seqs.set(l.attemptId, Math.max(seqs.get(l.attemptId) ?? -1, l.seq));
      else if ((latest.get(l.id)?.revision ?? -1) < l.revision) latest.set(l.id, l);
    }
    const open = [...latest.values()].filter((r) => r.actor.kind === 'human' && r.status === 'in-progress').sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
    if (!open || open.actor.kind !== 'human') return undefined;
    return new HumanAttempt(file, open, open.actor.consent?.interactionLog ?? false, (seqs.get(open.id) ?? -1) + 1, now);
  }

  get record(): Readonly<AttemptRecord> {
    return this.state;
  }

  get id(): string {
    return this.state.id;
  }

  get active(): boolean {
    return this.state.status === 'in-progress';
  }

  get interactionLog(): boolean {
    return this.logInteractions;
  }

  get agentAllowed(): boolean {
    return this.state.actor.kind === 'human' && this.state.actor.agentAllowed;
  }

  get hintsAllowed(): boolean {
    return this.state.actor.kind === 'human' && this.state.actor.hintsAllowed;
  }

  /** Records the next hint of the ladder as taken; returns its level (1 for the first). */
  hintTaken(): number {
    const at = this.now();
    const level = this.state.hints.length + 1;
    this.note({ kind: 'hint', level });
    this.write({ hints: [...this.state.hints, { level, at: at.toISOString(), elapsedMs: Math.max(0, at.getTime() - Date.parse(this.state.startedAt)) }] });
    return level;
  }

  elapsedMs(): number {
    return Math.max(0, this.now().getTime() - Date.parse(this.state.startedAt));
  }

  /** Time left under the limit (0 once it has passed), or undefined without a limit. */
  remainingMs(): number | undefined {
    return this.state.timeLimitMs === undefined ? undefined : Math.max(0, this.state.timeLimitMs - this.elapsedMs());
  }

  /** Logs what the person did, if they agreed to the interaction log; nothing once the attempt is over. */
  note(event: Interaction): void {
    if (!this.logInteractions || !this.active) return;
    const at = this.now();
    const line: InteractionRecord = {
      v: SCHEMA_VERSION,
      type: 'interaction',
      attemptId: this.state.id,
      seq: this.nextSeq++,
      at: at.toISOString(),
      elapsedMs: Math.max(0, at.getTime() - Date.parse(this.state.startedAt)),
      event,
    };
    appendRecords(this.file, [line]);
  }

  /**
   * A submitted fix and its verification. A verified fix ends the attempt; otherwise
   * the person keeps going. A verification that finishes after the attempt ended (the
   * time ran out meanwhile) is kept out of it.
   */
  submitted(v: Verification, diff: string): AttemptRecord {
    if (!this.active) return this.state;
    this.note({ kind: 'submit', verified: v.verified });
    const startedAt = Date.parse(this.state.startedAt);
    this.write({
      verifications: [...this.state.verifications, v],
      attempts: this.state.attempts + 1,
      patch: { diff, ...patchStat(diff) },
      ...(v.verified && {
        status: 'verified' as const,
        endedAt: v.at,
        timeToFixMs: Math.max(0, Date.parse(v.at) - startedAt),
      }),
    });
    return this.state;
  }

  /** Ends the attempt without a verified fix; `diff` is the workspace's changes at that moment ('' for none). */
  end(status: EndStatus, diff: string): AttemptRecord {
    if (!this.active) return this.state;
    this.write({ status, endedAt: this.now().toISOString(), patch: diff.trim() ? { diff, ...patchStat(diff) } : null });
    return this.state;
  }

  private write(change: Partial<AttemptRecord>): void {
    this.state = { ...this.state, ...change, revision: this.state.revision + 1 };
    appendRecords(this.file, [this.state]);
  }
}
