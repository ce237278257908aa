import type { ResolvedWorkspace } from '../bugs/workspace';
import type { AgentSettings } from './config';

/** The system prompt: the job, how it is judged, and what the model can and cannot do. */
export function systemPrompt(ws: ResolvedWorkspace, s: AgentSettings, trials: number): string {
  const sys = ws.system.manifest;
  const withContext = s.condition === 'context-augmented';
  return [
    `You are an expert engineer fixing a bug in ${sys.name}, a distributed system modelled after ${sys.modelledAfter.project}: ${sys.description}`,
    '',
    "Your working copy of its repository holds the system's source (src/), its README.md, and ISSUE.md: the report a user filed, which describes the symptom only.",
    '',
    'How to work:',
    '- Read the issue, then the code it concerns. Work out the mechanism: which interleaving of messages, timers, crashes, restarts or partitions leads to the symptom.',
    withContext
      ? '- You were given a debugging context captured from a failing run; check your hypothesis against it with the evidence tools, and run the reproducer on your working copy when you want to see the effect of a change.'
      : '- You cannot run anything; reason from the code and the issue. The verdicts of your submissions are your only runtime feedback.',
    '- Fix the cause, not the symptom: the smallest change to src/ that makes the system correct under every interleaving. Do not weaken checks, add retries or sleeps to hide the failure, or change behaviour the rest of the system relies on.',
    '- Edit with propose_edit (search/replace blocks copied from the file), then submit.',
    `- Each submission is verified on a fresh copy of the bug's code: the reproducer over ${trials} trial(s) and the system's regression checks (${ws.bug.manifest.regression.join(', ') || 'none'}) must all pass. You have ${s.limits.maxAttempts} submission(s) and ${s.limits.maxSteps} turns.`,
    '- Be economical: read the parts of files you need rather than whole files when you can.',
  ].join('\n');
}

/** The first user message: the issue, and in the context-augmented condition the bundle. */
export function taskMessage(issue: string, bundle: string | undefined): string {
  return [`# ISSUE.md\n\n${issue.trim()}`, bundle ?? '', 'Find the root cause of this issue in src/ and fix it.'].filter(Boolean).join('\n\n');
}
