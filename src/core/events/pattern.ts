import { RE2JS } from 're2js';

/**
 * A user's (or a model's) regular expression, run by a linear-time engine (RE2, pure
 * JS so it also runs in the extension host): a pattern like `(a+)+$` cannot backtrack
 * for hours. Every regex that someone other than this code wrote goes through here.
 */
export interface Pattern {
  readonly source: string;
  /** Whether the pattern matches anywhere in `text`. */
  test(text: string): boolean;
}

/** A pattern the engine refuses; the message names the construct and what to do. */
export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

/** Constructs backtracking engines have and RE2 does not, as RE2's messages reveal them. */
const UNSUPPORTED: { test: RegExp; feature: string }[] = [
  { test: /\(\?<[=!]/, feature: 'lookbehind ((?<= or (?<!)' },
  { test: /\(\?[=!]/, feature: 'lookahead ((?= or (?!)' },
  { test: /\\[1-9]|\\k</, feature: 'backreferences (\\1, \\k<name>)' },
];

/** JS flag letters: i, m and s change matching; g, y, u and d do not matter to a test. */
export function compilePattern(source: string, flags = ''): Pattern {
  const bad = [...flags].find((f) => !'imsguyd'.includes(f));
  if (bad) throw new PatternError(`unknown regular expression flag "${bad}"`);
  const bits = (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes('m') ? RE2JS.MULTILINE : 0) | (flags.includes('s') ? RE2JS.DOTALL : 0);
  // Translation accepts JS-only syntax (\u0041, \cA) but reads \k<name> as the letter k.
  if (hasNamedBackreference(source)) throw unsupported(source, 'backreferences (\\1, \\k<name>)');
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(source), bits);
  } catch (err) {
    const said = err instanceof Error ? err.message : String(err);
    const feature = UNSUPPORTED.find((u) => u.test.test(source))?.feature;
    if (feature) throw unsupported(source, feature);
    throw new PatternError(`/${source}/ is not a valid regular expression (RE2 syntax): ${said}`);
  }
  return { source, test: (text) => re.test(text) };
}

/** Whether the source has a \k<…> escape (skipping escaped backslashes), in one pass. */
function hasNamedBackreference(source: string): boolean {
  for (let i = 0; i < source.length; i++) {
    if (source[i] !== '\\') continue;
    if (source[i + 1] === 'k' && source[i + 2] === '<') return true;
    i++;
  }
  return false;
}

function unsupported(source: string, feature: string): PatternError {
  return new PatternError(`/${source}/ uses ${feature}, which the linear-time regex engine (RE2 syntax) does not support; rewrite it without`);
}

/** A case-insensitive substring match, with no regex syntax. */
export function substringPattern(text: string): Pattern {
  // An escaped literal cannot backtrack, so the native engine is safe and faster here.
  const re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  return { source: re.source, test: (s) => re.test(s) };
}
