/**
 * The one redraw scheduler (as Perfetto's raf_scheduler): every part of the app asks
 * for a redraw when something it shows changed, and however many ask between two
 * frames, the next animation frame draws once.
 */
export type RequestFrame = (callback: () => void) => void;

export class RedrawScheduler {
  private queued = false;

  constructor(
    private readonly draw: () => void,
    private readonly requestFrame: RequestFrame = (callback) => requestAnimationFrame(callback),
  ) {}

  /** A frame is queued and has not been drawn yet. */
  get pending(): boolean {
    return this.queued;
  }

  schedule(): void {
    if (this.queued) return;
    this.queued = true;
    this.requestFrame(() => {
      this.queued = false;
      this.draw();
    });
  }
}
