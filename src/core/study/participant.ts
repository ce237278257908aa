import { createHash, randomInt } from 'node:crypto';
import { ParticipantCode } from './schema';

/**
 * Participants are known by a pseudonymous code, generated here or handed out by the
 * study; never by a name. A study can narrow the accepted codes with its own pattern.
 */

/** Crockford's base-32 digits: no I, L, O or U, so a code read aloud or copied by hand survives. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Codes like P-7K2M9Q: a prefix and six random characters, at least one of them a digit. */
export function generateParticipantCode(prefix = 'P'): string {
  for (;;) {
    let body = '';
    for (let i = 0; i < 6; i++) body += ALPHABET[randomInt(ALPHABET.length)];
    if (/\d/.test(body)) return `${prefix}-${body}`;
  }
}

/** The default pattern: an upper-case prefix, an optional dash, then letters and digits (P07, P-7K2M9Q, S2-014). */
export const DEFAULT_PARTICIPANT_PATTERN = '^[A-Z]{1,4}-?[0-9A-Z]{2,12}$';

/** Why `code` is not acceptable, or undefined when it is. `pattern` is the study's (a regular expression). */
export function participantCodeProblem(code: string, pattern: string = DEFAULT_PARTICIPANT_PATTERN): string | undefined {
  const base = ParticipantCode.safeParse(code);
  if (!base.success) return base.error.issues[0]?.message ?? 'not a participant code';
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    return `the study's participant-code pattern ${JSON.stringify(pattern)} is not a valid regular expression; fix the setting`;
  }
  if (re.test(code)) return undefined;
  return pattern === DEFAULT_PARTICIPANT_PATTERN
    ? 'a participant code looks like P07, P-7K2M9Q or S2-014: one to four letters, an optional dash, then two to twelve letters or digits'
    : "this is not a code of this study's form; use the code the researcher gave you";
}

/** Codes are compared upper-case, so "p-7k2m9q" typed by hand is the same participant as "P-7K2M9Q". */
export function normaliseParticipantCode(code: string): string {
  return code.trim().toUpperCase();
}

export const DEFAULT_CONSENT_TEXT = [
  'This attempt is recorded for a study of how people and AI agents repair distributed-system bugs.',
  'Recorded: your participant code (never your name), the bug, start and end times, each fix you submit and its verification result, and your final patch.',
  'With the interaction log: which files you open, the sizes of your edits (never their content), and which DDBench commands and debugger sessions you use.',
  'Records stay in this workspace (.ddbench/records) until you or the researcher export them. You can give up at any time; giving up is recorded too.',
].join('\n\n');

/** Hash of the consent text shown, recorded so the wording agreed to can be checked later. */
export function consentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
