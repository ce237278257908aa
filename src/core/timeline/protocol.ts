/**
 * The timeline's message protocol, imported by both ends: the host (extension host,
 * or the HTML export's in-page data module) and the webview app. Every message is
 * checked with these schemas where it arrives. Requests carry a `reqId` that the
 * answer repeats; the webview sends `ready` first and the host answers nothing before.
 * Bulk data (per-pixel buckets, arrows, spans) travels as typed arrays, which
 * postMessage transfers without per-element serialisation.
 */
import { z } from 'zod';
import { Event, EventKind, Level } from '../events/event';

/** Bumped when a message changes shape; both ends come from the same build, so this catches stale webviews. */
export const PROTOCOL_VERSION = 1;

export const Axis = z.enum(['time', 'causal']);
export type Axis = z.infer<typeof Axis>;

/** An event: which run (0, or 1 when comparing) and its index in that run's store. */
/** Runs shown at once: a run and its comparison, or the executions of one log side by side (A to Z). */
export const MAX_RUNS = 26;
export const EventRef = z.object({ run: z.number().int().min(0).max(MAX_RUNS - 1), index: z.number().int().nonnegative() });

/** A run's letter when several are shown: A, B, C, … */
export function runLetter(run: number): string {
  return String.fromCharCode(65 + run);
}
export type EventRef = z.infer<typeof EventRef>;

export const Filter = z.object({
  /** Kinds shown; all when absent. */
  kinds: z.array(EventKind).optional(),
  /** Only events at this level or worse (events without a level are hidden then). */
  minLevel: Level.optional(),
  /** Text filter: a case-insensitive substring, or a regular expression when `regex`. */
  text: z.string().optional(),
  regex: z.boolean().optional(),
  /** Lane (node) names hidden, in every run. */
  hiddenLanes: z.array(z.string()).default([]),
  /** Steady, repeating messages (heartbeats, gossip) as a density band while too many are in view; on unless false. */
  hideChatter: z.boolean().optional(),
});
export type Filter = z.infer<typeof Filter>;

const reqId = z.number().int().nonnegative();
const range = z.tuple([z.number(), z.number()]);

// ---- webview → host ----

export const ReadyMsg = z.object({ type: z.literal('ready'), protocol: z.number().int() });
export const WindowRequest = z.object({
  type: z.literal('window'),
  reqId,
  axis: Axis,
  /** [from, to] in axis units (µs, or Lamport time); the whole extent when absent. */
  range: range.optional(),
  /** Buckets across the range: the canvas width in pixels. */
  width: z.number().int().min(1).max(16384),
  filter: Filter,
  /** For the minimap: buckets only, no arrows, spans or labels. */
  overview: z.boolean().optional(),
});
export type WindowRequest = z.infer<typeof WindowRequest>;
export const DetailsRequest = z.object({ type: z.literal('details'), reqId, ref: EventRef });
export const CausalRequest = z.object({ type: z.literal('causal'), reqId, ref: EventRef, axis: Axis });
export const SearchRequest = z.object({
  type: z.literal('search'),
  reqId,
  axis: Axis,
  filter: Filter,
  query: z.string().min(1),
  regex: z.boolean(),
  /** Also match the events' fields (paths, ids, values); by default only their text. */
  fields: z.boolean().default(false),
  /** Search from this position (axis units); with `after`, from just past that event. */
  from: z.number(),
  after: EventRef.optional(),
  dir: z.union([z.literal(1), z.literal(-1)]),
});
export type SearchRequest = z.infer<typeof SearchRequest>;
/** The previous or next shown event on the same lane. */
/** Clock problems found while deriving happens-before: asked for after the first paint, as it is the slow part. */
export const DiagnosticsRequest = z.object({ type: z.literal('diagnostics'), reqId });
export const StepRequest = z.object({ type: z.literal('step'), reqId, ref: EventRef, dir: z.union([z.literal(1), z.literal(-1)]), filter: Filter });
export const OpenSourceMsg = z.object({ type: z.literal('openSource'), ref: EventRef });
/** Asks the host to pick a second run to compare with (`stop` ends the comparison). */
export const CompareMsg = z.object({ type: z.literal('compare'), stop: z.boolean().optional() });

export const ToHost = z.discriminatedUnion('type', [ReadyMsg, WindowRequest, DetailsRequest, CausalRequest, SearchRequest, StepRequest, DiagnosticsRequest, OpenSourceMsg, CompareMsg]);
export type ToHost = z.infer<typeof ToHost>;
export type HostRequest = Extract<ToHost, { reqId: number }>;

// ---- host → webview ----

export const LaneRole = z.enum(['harness', 'node', 'client', 'router']);
export type LaneRole = z.infer<typeof LaneRole>;

export const LaneMeta = z.object({ name: z.string(), role: LaneRole, events: z.number().int() });
export type LaneMeta = z.infer<typeof LaneMeta>;

export const Violation = z.object({ index: z.number().int(), node: z.string(), ts: z.number(), text: z.string() });
export type Violation = z.infer<typeof Violation>;

export const SourceSummary = z.object({
  file: z.string(),
  format: z.string(),
  events: z.number().int(),
  duplicates: z.number().int(),
  bad: z.number().int(),
  notes: z.array(z.string()),
  executions: z.array(z.string()).optional(),
});

export const RunMeta = z.object({
  label: z.string(),
  /** The files or folders this run was read from (for restoring the view after a reload). */
  inputs: z.array(z.string()),
  events: z.number().int(),
  /** Changes whenever the data changes, so a persisted selection is only restored onto the same data. */
  fingerprint: z.string(),
  lanes: z.array(LaneMeta),
  sources: z.array(SourceSummary),
  badCount: z.number().int(),
  bad: z.array(z.object({ file: z.string(), line: z.number().int(), error: z.string() })),
  violations: z.array(Violation),
  messages: z.number().int(),
  /** No event has a time of its own (a log read without a time group): the page opens on the causal axis. */
  untimed: z.boolean(),
  /** Arrows from vector clocks and cross-service spans (core/events/edges.ts), besides the messages. */
  impliedEdges: z.number().int(),
  dropped: z.number().int(),
  /** Message types that repeat at a steady pace (timeline/chatter.ts), most messages first. */
  chatterTypes: z.array(z.string()),
  faultBands: z.number().int(),
});
export type RunMeta = z.infer<typeof RunMeta>;

export const Meta = z.object({
  title: z.string(),
  /** Events still arrive (a cluster is running). */
  live: z.boolean(),
  capabilities: z.object({ openSource: z.boolean(), compare: z.boolean() }),
  runs: z.array(RunMeta).min(1).max(MAX_RUNS),
  /** When comparing: where run 1 first departs from run 0, per lane and overall. */
  divergence: z
    .object({
      first: z.object({ node: z.string(), a: z.number().int(), b: z.number().int() }).nullable(),
      lanes: z.array(z.object({ node: z.string(), a: z.number().int(), b: z.number().int() })),
    })
    .optional(),
});
export type Meta = z.infer<typeof Meta>;

export const MetaMsg = z.object({ type: z.literal('meta'), protocol: z.number().int(), meta: Meta, reason: z.enum(['init', 'update']) });
export const DiagnosticsData = z.object({
  type: z.literal('diagnosticsData'),
  reqId,
  runs: z.array(z.object({ clockIssueCount: z.number().int(), clockIssues: z.array(z.object({ kind: z.string(), message: z.string(), events: z.array(z.number().int()) })) })),
});
export type DiagnosticsData = z.infer<typeof DiagnosticsData>;

const u8 = z.instanceof(Uint8Array);
const u16 = z.instanceof(Uint16Array);
const u32 = z.instanceof(Uint32Array);
const i32 = z.instanceof(Int32Array);
const f64 = z.instanceof(Float64Array);

export const Row = z.object({ run: z.number().int(), lane: z.number().int(), node: z.string(), role: LaneRole });
export type Row = z.infer<typeof Row>;

/** Arrow flags. */
export const ARROW = { dropped: 1, delayed: 2, duplicated: 4, reordered: 8 } as const;

export const BandKind = z.enum(['partition', 'link', 'paused', 'down', 'crashed']);
export type BandKind = z.infer<typeof BandKind>;

export const Overlays = z.object({
  bands: z.array(z.object({ run: z.number().int(), kind: BandKind, nodes: z.array(z.string()), x0: z.number(), x1: z.number(), label: z.string(), start: z.number().int() })),
  violations: z.array(z.object({ run: z.number().int(), node: z.string(), x: z.number(), index: z.number().int(), text: z.string() })),
  divergence: z.array(z.object({ run: z.number().int(), node: z.string(), x: z.number(), index: z.number().int(), first: z.boolean() })),
});
export type Overlays = z.infer<typeof Overlays>;

export const WindowData = z.object({
  type: z.literal('windowData'),
  reqId,
  axis: Axis,
  from: z.number(),
  to: z.number(),
  width: z.number().int(),
  /** The whole run's extent on this axis (both runs when comparing). */
  extent: range,
  overview: z.boolean(),
  /** Shown lanes, top to bottom; the bucket arrays hold `width` entries per row in this order. */
  rows: z.array(Row),
  /** Events in the window that pass the filter. */
  total: z.number().int(),
  count: u32,
  /** Most severe level code per bucket (0 none, debug 1 … error 4). */
  maxLevel: u8,
  /** One bit per event kind present (bit = index in EventKind). */
  kinds: u8,
  /** The most important event per bucket (store index of the row's run), -1 when empty. */
  top: i32,
  /** 1 where the bucket holds an invariant violation. */
  alarm: u8,
  /**
   * Message arrows from the send (row0, x0) to where the message ended (row1, x1):
   * its receive, or the router's drop. `total` is how many overlap the window; fewer
   * are sent when that is more than can be told apart (an even sample, flagged ones first).
   */
  arrows: z.object({ row0: u16, row1: u16, x0: f64, x1: f64, flags: u8, send: i32, end: i32, total: z.number().int() }),
  /** Span bars; below a pixel only the longest per pixel and depth. */
  spans: z.object({ row: u16, depth: u8, x0: f64, x1: f64, index: i32, total: z.number().int() }),
  /**
   * Chatter messages not drawn as arrows (too many in view, and the filter hides chatter):
   * sends per row and pixel bucket (`width` per row, empty when none is hidden), and how many.
   */
  chatter: z.object({ count: u32, hidden: z.number().int() }),
  /** Texts for the representatives of rows sparse enough to read. */
  labels: z.object({ row: u16, x: f64, index: i32, text: z.array(z.string()) }),
  overlays: Overlays,
});
export type WindowData = z.infer<typeof WindowData>;

export const PartnerInfo = z.object({ ref: EventRef, node: z.string(), kind: EventKind, ts: z.number() });
export const DetailsData = z.object({
  type: z.literal('details'),
  reqId,
  ref: EventRef,
  event: Event,
  /** Where the event was read from (events file and line). */
  origin: z.object({ file: z.string(), line: z.number().int() }),
  x: z.object({ time: z.number(), causal: z.number() }),
  lamport: z.number().int(),
  /** Per node, how many of its events happened before or at this one (derived from all edges). */
  derivedClock: z.record(z.string(), z.number()),
  partners: z.array(PartnerInfo),
  /** Dropped / delayed / duplicated steps the router recorded for this message. */
  routerFaults: z.array(z.object({ ref: EventRef, action: z.string(), ts: z.number() })),
  pastSize: z.number().int(),
  futureSize: z.number().int(),
});
export type DetailsData = z.infer<typeof DetailsData>;

export const CausalData = z.object({
  type: z.literal('causalSet'),
  reqId,
  ref: EventRef,
  axis: Axis,
  /** Per lane of the event's run: the past is the lane up to `pastTo`, the future from `futureFrom` (axis units). */
  lanes: z.array(z.object({ node: z.string(), pastTo: z.number().nullable(), futureFrom: z.number().nullable(), past: z.number().int(), future: z.number().int() })),
});
export type CausalData = z.infer<typeof CausalData>;

export const SearchResult = z.object({
  type: z.literal('searchResult'),
  reqId,
  match: z.object({ ref: EventRef, x: z.number() }).nullable(),
  /** 1-based position of the match among all matches, and their number. */
  position: z.number().int(),
  total: z.number().int(),
  /** Set when the query is not a valid regular expression. */
  error: z.string().optional(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const StepResult = z.object({ type: z.literal('stepResult'), reqId, match: z.object({ ref: EventRef, x: z.object({ time: z.number(), causal: z.number() }) }).nullable() });
export type StepResult = z.infer<typeof StepResult>;

/** The answer to each request type. */
export interface Replies {
  window: WindowData;
  details: DetailsData;
  causal: CausalData;
  search: SearchResult;
  step: StepResult;
  diagnostics: DiagnosticsData;
}

export const ErrorMsg = z.object({ type: z.literal('error'), reqId: reqId.optional(), message: z.string() });

export const ToWebview = z.discriminatedUnion('type', [MetaMsg, DiagnosticsData, WindowData, DetailsData, CausalData, SearchResult, StepResult, ErrorMsg]);
export type ToWebview = z.infer<typeof ToWebview>;
export type HostReply = Extract<ToWebview, { reqId: number }>;

// ---- persisted webview state ----

/**
 * The one blob the webview persists (VS Code's getState/setState, or the page's
 * history state): navigation and UI only; the data is always re-fetched.
 */
export const UiState = z.object({
  v: z.literal(1),
  axis: Axis,
  /** Visible range per axis; null = fit everything. */
  view: z.object({ time: range.nullable(), causal: range.nullable() }),
  filter: Filter,
  selection: z.object({ ref: EventRef, fingerprint: z.string() }).nullable(),
  search: z.object({ query: z.string(), regex: z.boolean(), fields: z.boolean().default(false) }),
  detailsOpen: z.boolean(),
  /** Keep the view on the newest events while a cluster runs. */
  follow: z.boolean(),
  /** Inputs per run, so a restored panel reloads the same data. */
  inputs: z.array(z.array(z.string())).optional(),
  /** The data's fingerprints per run: a panel showing other data starts afresh (fit, no search, the first violation). */
  runs: z.array(z.string()).optional(),
});
export type UiState = z.infer<typeof UiState>;

export const DEFAULT_UI_STATE: UiState = {
  v: 1,
  axis: 'time',
  view: { time: null, causal: null },
  filter: { hiddenLanes: [] },
  selection: null,
  search: { query: '', regex: false, fields: false },
  detailsOpen: true,
  follow: false,
};

/** A persisted blob in the current shape; an older, newer or damaged one gives the defaults. */
export function migrateUiState(raw: unknown): UiState {
  const parsed = UiState.safeParse(raw);
  return parsed.success ? parsed.data : { ...DEFAULT_UI_STATE };
}
