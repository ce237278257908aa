// optime.js — OpTime, after mongo/db/repl/optime.h: a point in the oplog named by
// the term of the primary that wrote it and its timestamp. OpTimes order by term
// first, then by timestamp.

export const NULL_OPTIME = Object.freeze({ ts: 0, t: -1 });

export function opTimeOf(entry) {
  return entry ? { ts: entry.ts, t: entry.t } : NULL_OPTIME;
}

export function compareOpTime(a, b) {
  if (a.t !== b.t) return a.t < b.t ? -1 : 1;
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  return 0;
}

export function sameOpTime(a, b) {
  return compareOpTime(a, b) === 0;
}

export function fmt(op) {
  return `{ts: ${op.ts}, t: ${op.t}}`;
}
