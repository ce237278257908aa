import { z } from 'zod';
import { Report } from './report';

/**
 * Messages between the editor's comparison view and its webview, checked with zod where
 * they arrive (both ends import this file). The webview says `ready` first; the host
 * answers with the report, and again whenever the records change.
 */

/** What the view compares: the open bug workspace's records, or chosen records folders. */
export const ComparisonSource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('workspace') }),
  z.object({ kind: z.literal('folders'), paths: z.array(z.string()).min(1) }),
]);
export type ComparisonSource = z.infer<typeof ComparisonSource>;

export const ToHost = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('pickFolders') }),
  z.object({ type: z.literal('exportHtml') }),
  /** Open the diff editor: this attempt's final patch against the reference fix (refused while an attempt is in progress). */
  z.object({ type: z.literal('comparePatch'), attemptId: z.string() }),
]);
export type ToHost = z.infer<typeof ToHost>;

export const ToView = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('report'),
    title: z.string(),
    source: ComparisonSource,
    report: Report,
    /** Whether an attempt is in progress here (the view offers no reference comparison then). */
    attemptInProgress: z.boolean(),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ToView = z.infer<typeof ToView>;

/** What the webview keeps across reloads (vscode.setState), so the panel comes back on the same records. */
export const ViewState = z.object({ source: ComparisonSource });
export type ViewState = z.infer<typeof ViewState>;
