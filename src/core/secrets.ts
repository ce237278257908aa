/**
 * The one redaction step: every sink that writes or shows text a run produced (event
 * logs, message records, study records, trajectories, patches, CLI output, the editor's
 * output channel, endpoint errors) passes it through `redact`, which replaces the value
 * of every configured secret. Secrets are registered where they enter (the environment,
 * the editor's SecretStorage, a run's options); the set is process-wide because the
 * sinks are far from where keys are read and must not need the key handed down.
 */

export const REDACTED = '[redacted]';

/** Shorter values would redact ordinary text (a key of "x" would blank every x); none seen in practice is this short. */
export const MIN_SECRET_LENGTH = 8;

const secrets = new Set<string>();

/** Adds a secret's value, and its JSON-escaped form, to what `redact` replaces; empty or too short values are ignored. */
export function addSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
  secrets.add(value);
  secrets.add(JSON.stringify(value).slice(1, -1));
}

/** `text` with every configured secret's value replaced by [redacted]. */
export function redact(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** A JSON value with every configured secret's value redacted in its strings and keys (for objects kept in memory as well as written). */
export function redactJson<T extends object>(value: T): T {
  const text = JSON.stringify(value);
  const clean = redact(text);
  return clean === text ? value : (JSON.parse(clean) as T);
}
