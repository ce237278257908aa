/**
 * Text from a tool call (a path, a node name, a line of SEARCH) as a message shows it: at
 * most `max` characters, then how long it was, so a multi-megabyte argument is never
 * echoed back whole to the model, the trajectory or the terminal.
 */
export function echo(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
