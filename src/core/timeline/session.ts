import type { Event } from '../events/event';
import type { TimelineModel } from './model';
import { PROTOCOL_VERSION, ToHost, type ToWebview } from './protocol';

/** How the host reaches the webview: VS Code's webview.postMessage, or a function call inside the HTML export. */
export type PostToWebview = (msg: ToWebview) => void;

/** What only the surrounding host can do; absent hooks mean the capability is off. */
export interface SessionHooks {
  openSource?: (event: Event, inputs: readonly string[]) => Promise<void> | void;
  compare?: (stop: boolean) => Promise<void> | void;
  /** Problems that are the host's, not the user's (a message that fails the protocol). */
  log?: (message: string) => void;
}

/**
 * Connects a model to one webview: nothing is sent before the webview says `ready`
 * (a webview that is still loading would lose it), every incoming message is checked
 * against the protocol, and a request that fails gets an error answer instead of
 * silence. A `ready` after a reload starts over with fresh metadata.
 */
export class TimelineSession {
  private ready = false;

  constructor(
    readonly model: TimelineModel,
    private readonly post: PostToWebview,
    private readonly hooks: SessionHooks = {},
  ) {}

  receive(raw: unknown): void {
    const parsed = ToHost.safeParse(raw);
    if (!parsed.success) {
      this.hooks.log?.(`timeline: ignored a message that is not in the protocol: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'ready':
        if (msg.protocol !== PROTOCOL_VERSION) {
          this.post({ type: 'error', message: `the timeline page speaks protocol ${msg.protocol}, the host ${PROTOCOL_VERSION}: reload the window` });
          return;
        }
        this.ready = true;
        this.post({ type: 'meta', protocol: PROTOCOL_VERSION, meta: this.model.meta(), reason: 'init' });
        return;
      case 'openSource':
        return this.run(() => {
          const { event, inputs } = this.model.eventAt(msg.ref);
          return this.hooks.openSource?.(event, inputs);
        });
      case 'compare':
        return this.run(() => this.hooks.compare?.(msg.stop === true));
      default:
        if (!this.ready) return;
        try {
          this.post(this.model.handle(msg));
        } catch (err) {
          this.post({ type: 'error', reqId: msg.reqId, message: describe(err) });
        }
    }
  }

  /** The data changed (live events, a comparison started or ended): the webview refetches and keeps its view. */
  update(): void {
    if (!this.ready) return;
    this.post({ type: 'meta', protocol: PROTOCOL_VERSION, meta: this.model.meta(), reason: 'update' });
  }

  private run(action: () => Promise<void> | void): void {
    Promise.resolve()
      .then(action)
      .catch((err: unknown) => this.post({ type: 'error', message: describe(err) }));
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

