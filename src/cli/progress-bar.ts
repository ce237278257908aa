import type { BenchProgress } from '../core/study/bench';
import { duration } from './study-text';

/**
 * The batch's progress on stderr: on a terminal one line redrawn in place, elsewhere
 * (CI logs, kubectl logs) one line per finished run so the log stays readable.
 */
export function benchProgressPrinter(stream: NodeJS.WriteStream = process.stderr): (p: BenchProgress) => void {
  let lastDone = -1;
  return (p) => {
    const line = progressLine(p);
    if (stream.isTTY) {
      stream.write(`\r\x1b[2K${line.slice(0, (stream.columns ?? 120) - 1)}`);
      if (p.done + p.skipped === p.total && p.running === 0) stream.write('\n');
    } else if (p.done !== lastDone || p.last?.status === 'interrupted') {
      lastDone = p.done;
      stream.write(line + '\n');
    }
  };
}

export function progressLine(p: BenchProgress): string {
  const width = 24;
  const finished = p.done + p.skipped;
  const filled = p.total ? Math.round((finished / p.total) * width) : width;
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const parts = [
    `[${bar}] ${finished}/${p.total}`,
    ...(p.skipped ? [`${p.skipped} done before`] : []),
    `${p.running} running`,
    `${p.verified} verified`,
    ...(p.errors ? [`${p.errors} errors`] : []),
    `${duration(p.elapsedMs)} elapsed`,
    `ETA ${p.etaMs === null ? '…' : duration(p.etaMs)}`,
  ];
  const last = p.last ? `  last: ${p.last.job.key} ${p.last.status}` : '';
  return parts.join(' · ') + last;
}
