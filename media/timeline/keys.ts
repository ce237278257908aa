/** Keyboard shortcuts: one table drives both the key handler and the help overlay. */
export type Action =
  | 'zoomIn'
  | 'zoomOut'
  | 'panLeft'
  | 'panRight'
  | 'prevEvent'
  | 'nextEvent'
  | 'laneUp'
  | 'laneDown'
  | 'fitAll'
  | 'fitSelection'
  | 'partner'
  | 'openSource'
  | 'clearSelection'
  | 'search'
  | 'nextMatch'
  | 'prevMatch'
  | 'nextViolation'
  | 'prevViolation'
  | 'divergence'
  | 'toggleAxis'
  | 'toggleDetails'
  | 'toggleFollow'
  | 'home'
  | 'end'
  | 'help';

export interface Shortcut {
  keys: string[];
  action: Action;
  label: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { keys: ['w', '+', '='], action: 'zoomIn', label: 'Zoom in (around the selection, else the centre)' },
  { keys: ['s', '-'], action: 'zoomOut', label: 'Zoom out' },
  { keys: ['a'], action: 'panLeft', label: 'Pan left' },
  { keys: ['d'], action: 'panRight', label: 'Pan right' },
  { keys: ['ArrowLeft'], action: 'prevEvent', label: 'Previous event on the lane' },
  { keys: ['ArrowRight'], action: 'nextEvent', label: 'Next event on the lane' },
  { keys: ['ArrowUp'], action: 'laneUp', label: 'Nearest event on the lane above' },
  { keys: ['ArrowDown'], action: 'laneDown', label: 'Nearest event on the lane below' },
  { keys: ['f', '0'], action: 'fitAll', label: 'Fit the whole run' },
  { keys: ['z'], action: 'fitSelection', label: 'Fit the selected event and its message partner' },
  { keys: ['p'], action: 'partner', label: 'Go to the message partner (send ↔ receive)' },
  { keys: ['Enter', 'o'], action: 'openSource', label: 'Open the source line that logged the event' },
  { keys: ['Escape'], action: 'clearSelection', label: 'Clear the selection / close this help' },
  { keys: ['/', 'Ctrl+f'], action: 'search', label: 'Search' },
  { keys: ['n'], action: 'nextMatch', label: 'Next search match' },
  { keys: ['N'], action: 'prevMatch', label: 'Previous search match' },
  { keys: ['v'], action: 'nextViolation', label: 'Next invariant violation' },
  { keys: ['V'], action: 'prevViolation', label: 'Previous invariant violation' },
  { keys: ['g'], action: 'divergence', label: 'Go to the first divergence (when comparing)' },
  { keys: ['c'], action: 'toggleAxis', label: 'Switch between wall time and causal (Lamport) order' },
  { keys: ['i'], action: 'toggleDetails', label: 'Show or hide the details panel' },
  { keys: ['l'], action: 'toggleFollow', label: 'Follow the newest events (live runs)' },
  { keys: ['Home'], action: 'home', label: 'Go to the start' },
  { keys: ['End'], action: 'end', label: 'Go to the end' },
  { keys: ['?'], action: 'help', label: 'Show this help' },
];

/** The key as the table spells it: "Ctrl+f", "N", "ArrowLeft". */
export function keyName(e: KeyboardEvent): string {
  return (e.ctrlKey || e.metaKey) && e.key.length === 1 ? `Ctrl+${e.key.toLowerCase()}` : e.key;
}

export function actionFor(e: KeyboardEvent): Action | undefined {
  if (e.altKey) return undefined;
  const name = keyName(e);
  return SHORTCUTS.find((s) => s.keys.includes(name))?.action;
}
