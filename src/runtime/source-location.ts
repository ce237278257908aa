import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourceLocation {
  file: string;
  line: number;
}

/** `at fn (file:line:col)` or `at file:line:col`; the last `(` group wins for eval frames. */
const FRAME = /^\s*at (?:.*\()?((?:file:\/\/)?[^()]+?):(\d+):\d+\)?$/;

/** A file (path or file: URL) and line as a location relative to srcRoot; undefined unless the file is absolute. */
function locate(rawFile: string, line: number, srcRoot: string): SourceLocation | undefined {
  let file = rawFile.startsWith('file://') ? fileURLToPath(rawFile) : rawFile;
  if (!path.isAbsolute(file)) return undefined;
  const relative = path.relative(srcRoot, file);
  // Files outside the source root keep their absolute path rather than a '../..' chain.
  if (!relative.startsWith('..') && !path.isAbsolute(relative)) file = relative;
  return { file: file.split(path.sep).join('/'), line };
}

/** Parses one V8 stack frame line; undefined for native or anonymous frames. */
function parseFrame(line: string, srcRoot: string): SourceLocation | undefined {
  const match = FRAME.exec(line);
  if (match === null) return undefined;
  const [, rawFile, rawLine] = match;
  if (rawFile === undefined || rawLine === undefined) return undefined;
  return locate(rawFile, Number(rawLine), srcRoot);
}

const captureCallSites = (_err: Error, sites: NodeJS.CallSite[]): NodeJS.CallSite[] => sites;
/** The caller is the first frame above `fn`; a few more cover a call through a wrapper or from native code. */
const CALLER_FRAMES = 4;
/** Usually the very first frame is the system's line, and capturing one frame costs less than four. */
const FIRST_TRY_FRAMES = 1;
/** Relative file names of the call sites seen so far, per source root: a node logs from a handful of files. */
const relativeFiles = new Map<string, Map<string, string | null>>();

function locateCallSite(file: string, line: number, srcRoot: string): SourceLocation | undefined {
  let files = relativeFiles.get(srcRoot);
  if (files === undefined) relativeFiles.set(srcRoot, (files = new Map()));
  let relative = files.get(file);
  if (relative === undefined) {
    relative = locate(file, 1, srcRoot)?.file ?? null;
    files.set(file, relative);
  }
  return relative === null ? undefined : { file: relative, line };
}

/**
 * The source location of whoever called `fn`: the logger passes its own method, so
 * V8 cuts the stack right above the system's call.
 */
export function callerLocation(fn: (...args: never[]) => unknown, srcRoot: string): SourceLocation | undefined {
  // With source maps on, only the formatted stack has the mapped positions.
  if (process.sourceMapsEnabled) return formattedCallerLocation(fn, srcRoot);
  // Otherwise read V8's call sites directly: formatting every frame as text costs more than the
  // rest of a log call, and simulations log thousands of times per second.
  const saved = Error.prepareStackTrace;
  const savedLimit = Error.stackTraceLimit;
  Error.prepareStackTrace = captureCallSites;
  try {
    // The first frames of the deeper capture are the same frames, so trying one first changes no answer.
    return firstLocation(fn, FIRST_TRY_FRAMES, srcRoot) ?? firstLocation(fn, CALLER_FRAMES, srcRoot);
  } finally {
    Error.prepareStackTrace = saved;
    Error.stackTraceLimit = savedLimit;
  }
}

/** The first of the `frames` call sites above `fn` that is a file location (prepareStackTrace must capture call sites). */
function firstLocation(fn: (...args: never[]) => unknown, frames: number, srcRoot: string): SourceLocation | undefined {
  Error.stackTraceLimit = frames;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  Error.captureStackTrace(holder, fn);
  for (const site of holder.stack ?? []) {
    const file = site.getFileName();
    const line = site.getLineNumber();
    const location = file == null || line === null ? undefined : locateCallSite(file, line, srcRoot);
    if (location !== undefined) return location;
  }
  return undefined;
}

function formattedCallerLocation(fn: (...args: never[]) => unknown, srcRoot: string): SourceLocation | undefined {
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, fn);
  const frames = (holder.stack ?? '').split('\n').slice(1);
  for (const frame of frames) {
    const location = parseFrame(frame, srcRoot);
    if (location !== undefined) return location;
  }
  return undefined;
}

/**
 * Where an error was thrown, preferring the first frame inside the source root so an
 * exception raised in a library still points at the system's line that led to it.
 */
export function errorLocation(stack: string | undefined, srcRoot: string): SourceLocation | undefined {
  const locations = (stack ?? '')
    .split('\n')
    .map((frame) => parseFrame(frame, srcRoot))
    .filter((location): location is SourceLocation => location !== undefined);
  return locations.find((location) => !path.isAbsolute(location.file)) ?? locations[0];
}
