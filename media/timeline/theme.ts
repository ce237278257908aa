/** Canvas colours, read from the CSS variables (VS Code's theme, or the page's fallbacks). */
export interface Theme {
  bg: string;
  fg: string;
  muted: string;
  border: string;
  laneAlt: string;
  focus: string;
  msg: string;
  log: string;
  warn: string;
  error: string;
  fault: string;
  check: string;
  span: string;
  past: string;
  future: string;
  bandPartition: string;
  bandLink: string;
  bandPaused: string;
  bandDown: string;
  font: string;
  mono: string;
}

const VARS: Record<keyof Theme, string> = {
  bg: '--tl-bg',
  fg: '--tl-fg',
  muted: '--tl-muted',
  border: '--tl-border',
  laneAlt: '--tl-lane-alt',
  focus: '--tl-focus',
  msg: '--tl-msg',
  log: '--tl-log',
  warn: '--tl-warn',
  error: '--tl-error',
  fault: '--tl-fault',
  check: '--tl-check',
  span: '--tl-span',
  past: '--tl-past',
  future: '--tl-future',
  bandPartition: '--tl-band-partition',
  bandLink: '--tl-band-link',
  bandPaused: '--tl-band-paused',
  bandDown: '--tl-band-down',
  font: '--tl-font',
  mono: '--tl-mono',
};

export function readTheme(el: Element): Theme {
  const style = getComputedStyle(el);
  const theme = {} as Theme;
  for (const key of Object.keys(VARS) as (keyof Theme)[]) theme[key] = style.getPropertyValue(VARS[key]).trim() || '#888';
  return theme;
}

/** Calls `changed` when VS Code switches theme (it changes the body's classes and inline variables). */
export function onThemeChange(changed: () => void): void {
  new MutationObserver(changed).observe(document.body, { attributes: true, attributeFilter: ['class', 'style'] });
}
