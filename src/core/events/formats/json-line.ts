/** One log line as a JSON object, or undefined when it is not one (a structured logger's lines beside a panic's text). */
export function jsonObjectLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
}
