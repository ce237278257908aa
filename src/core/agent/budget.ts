/**
 * Bounded tool output. Every result is cut to a size (head and tail kept, with a note
 * of what was cut, as mini-swe-agent does), and evidence-like results (logs, timeline,
 * state, reproducer output, the context bundle) also draw on one token budget per run.
 */

/** A rough token count (4 characters a token), used where the endpoint reports none. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * `text` cut to at most `maxChars`: the head and the tail (at line boundaries when it
 * can), and between them a note saying how many lines and characters were left out.
 */
export function truncateMiddle(text: string, maxChars: number, advice = ''): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 200);
  const headEnd = cutAtLine(text, Math.ceil(keep / 2), 'back');
  const tailStart = cutAtLine(text, text.length - Math.floor(keep / 2), 'forward');
  const cut = text.slice(headEnd, tailStart);
  const lines = cut.split('\n').length - 1;
  const note = `\n[... ${cut.length} characters (${lines} lines) cut from the middle${advice ? `; ${advice}` : ''} ...]\n`;
  return text.slice(0, headEnd) + note + text.slice(tailStart);
}

function cutAtLine(text: string, at: number, dir: 'back' | 'forward'): number {
  const slack = 200;
  if (dir === 'back') {
    const nl = text.lastIndexOf('\n', at);
    return nl >= 0 && at - nl < slack ? nl + 1 : at;
  }
  const nl = text.indexOf('\n', at);
  return nl >= 0 && nl - at < slack ? nl + 1 : at;
}

const MIN_USEFUL_TOKENS = 100;

/** The run's allowance of evidence tokens; each evidence result takes what it uses. */
export class EvidenceBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  get spent(): number {
    return this.used;
  }

  get remaining(): number {
    return Math.max(0, this.limit - this.used);
  }

  /**
   * `text` cut to fit both `maxChars` and what is left of the budget, which it then
   * charges. An exhausted budget returns a note instead of the evidence.
   */
  take(text: string, maxChars: number): string {
    // Below this a result would be nothing but the truncation note.
    if (this.remaining < MIN_USEFUL_TOKENS) {
      return `[evidence budget exhausted: ${this.used} of ${this.limit} tokens used; work from what you have, read code, or submit]`;
    }
    const fit = Math.min(maxChars, this.remaining * 4);
    const out = truncateMiddle(text, fit, `the evidence budget has ${this.remaining} tokens left; ask for a narrower view`);
    this.used += estimateTokens(out);
    return out;
  }
}
