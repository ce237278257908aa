import { z } from 'zod';
import { DEFAULT_CONSENT_TEXT, DEFAULT_PARTICIPANT_PATTERN } from '../core/study/participant';
import { SettingsError } from './settings';

/**
 * The study settings a researcher sets for a human baseline study (in the workspace's
 * or the machine's settings.json). vscode-free, so the manifest test compares the keys
 * and defaults with package.json.
 */
export const STUDY_SETTINGS = {
  consentText: 'ddbench.study.consentText',
  participantCodePattern: 'ddbench.study.participantCodePattern',
  timeLimitMinutes: 'ddbench.study.timeLimitMinutes',
  interactionLog: 'ddbench.study.interactionLog',
  allowAgent: 'ddbench.study.allowAgent',
  allowHints: 'ddbench.study.allowHints',
  label: 'ddbench.study.label',
} as const;

const StudySettings = z.object({
  /** Cleared, it falls back to the built-in text: an attempt never starts without consent text. */
  consentText: z.string().default('').transform((s) => s.trim() || DEFAULT_CONSENT_TEXT),
  participantCodePattern: z.string().min(1).default(DEFAULT_PARTICIPANT_PATTERN),
  timeLimitMinutes: z.number().int().min(1).max(24 * 60).nullable().default(null),
  interactionLog: z.boolean().default(true),
  allowAgent: z.boolean().default(false),
  allowHints: z.boolean().default(false),
  label: z.string().max(100).default(''),
});
export type StudySettings = z.infer<typeof StudySettings>;

export function parseStudySettings(get: (key: string) => unknown): StudySettings {
  const raw = Object.fromEntries(Object.entries(STUDY_SETTINGS).map(([name, key]) => [name, get(key) ?? undefined]));
  const parsed = StudySettings.safeParse(raw);
  if (!parsed.success) {
    const byName = new Map<string, string>(Object.entries(STUDY_SETTINGS));
    throw new SettingsError(`invalid DDBench study settings (fix them in Settings): ${parsed.error.issues.map((i) => `${byName.get(String(i.path[0])) ?? String(i.path[0])}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}
