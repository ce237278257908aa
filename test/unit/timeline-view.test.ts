// The timeline webview's pure parts, in plain Node: the view state's arithmetic, the
// one redraw scheduler's coalescing (with an injected requestAnimationFrame), and the
// selection's choices of the next violation and of a lane's nearest event.
import * as assert from 'node:assert/strict';
import { DEFAULT_UI_STATE, type Meta, type UiState } from '../../src/core/timeline/protocol';
import { RedrawScheduler } from '../../media/timeline/scheduler';
import { nearestInRow, nextViolation } from '../../media/timeline/selection';
import { fitRange } from '../../media/timeline/viewport';
import { ViewState } from '../../media/timeline/view-state';

function viewOf(extent: [number, number] = [0, 10_000]): { view: ViewState; ui: UiState; changes: () => number } {
  const ui: UiState = structuredClone(DEFAULT_UI_STATE);
  let changes = 0;
  const view = new ViewState(ui, () => changes++);
  view.place(extent, 'fit', false);
  return { view, ui, changes: () => changes };
}

describe('timeline view state', () => {
  it('places the view: fit, the saved range, where it was, or at the newest events', () => {
    const { view, ui } = viewOf();
    assert.deepEqual(view.range, fitRange([0, 10_000]));
    ui.view.time = [1000, 2000];
    view.place([0, 10_000], 'restore', false);
    assert.deepEqual(view.range, [1000, 2000]);
    view.place([0, 20_000], 'keep', true);
    assert.deepEqual(view.range, [1000, 2000], 'kept where it was');
    view.place([0, 20_000], 'follow', true);
    assert.deepEqual(view.range, [19_000, 20_020], 'the newest events, the same width');
    view.place([0, 20_000], 'follow', false);
    assert.deepEqual(view.range, fitRange([0, 20_000]), 'nothing shown yet: follow fits');
    view.range = [0, 1000];
    view.place([0, 20_000], 'restore', true, 15_000);
    assert.ok(view.range[0] <= 15_000 && 15_000 <= view.range[1], 'the selection is brought into view');
  });

  it('remembers the range per axis and tells the app each change, but not a placement', () => {
    const { view, ui, changes } = viewOf();
    view.set([2000, 3000]);
    assert.deepEqual(ui.view, { time: [2000, 3000], causal: null });
    assert.equal(changes(), 1);
    assert.equal(view.setAxis('causal'), 'fit', 'no saved causal range');
    assert.equal(ui.axis, 'causal');
    view.place([0, 400], 'fit', true);
    assert.equal(changes(), 1);
    view.set([10, 50]);
    assert.equal(view.setAxis('time'), 'restore');
    assert.deepEqual(ui.view, { time: [2000, 3000], causal: [10, 50] });
  });

  it('zooms at an anchor, pans by a fraction, and keeps within the extent', () => {
    const { view } = viewOf();
    view.set([1000, 3000]);
    view.zoom(0.5, view.anchorAt(1500));
    assert.deepEqual(view.range, [1250, 2250], 'the selected point stays put');
    assert.equal(view.anchorAt(9000), 0.5, 'a selection out of view anchors at the centre');
    assert.equal(view.anchorAt(undefined), 0.5);
    view.pan(-0.5);
    assert.deepEqual(view.range, [750, 1750]);
    view.pan(-100);
    assert.equal(view.range[0], fitRange([0, 10_000])[0], 'not past the start');
    view.toEnd();
    assert.equal(view.range[1], fitRange([0, 10_000])[1]);
    assert.equal(view.range[1] - view.range[0], 1000, 'the width is kept');
    view.toStart();
    assert.deepEqual(view.range, [-200, 800]);
  });

  it('reveals a point by moving the least, and not at all when it is in view', () => {
    const { view, changes } = viewOf();
    view.set([1000, 2000]);
    const before = changes();
    view.reveal(1500);
    assert.equal(changes(), before, 'already in view');
    view.reveal(5000);
    assert.deepEqual(view.range, [4500, 5500]);
    assert.equal(changes(), before + 1);
  });

  it('turns a vertical wheel into a zoom at the pointer and a horizontal one (or Shift) into a pan', () => {
    const { view } = viewOf();
    view.set([1000, 2000]);
    view.wheel({ deltaX: 0, deltaY: -100, shiftKey: false }, 0, 500);
    assert.equal(view.range[0], 1000, 'zoomed in at the left edge, which stays put');
    assert.ok(view.range[1] < 2000);
    view.set([1000, 2000]);
    view.wheel({ deltaX: 0, deltaY: 100, shiftKey: true }, 0.5, 500);
    assert.deepEqual(view.range, [1200, 2200], 'Shift+wheel pans by delta/plot width of the view');
    view.wheel({ deltaX: -250, deltaY: 10, shiftKey: false }, 0.5, 500);
    assert.deepEqual(view.range, [700, 1700]);
    view.wheel({ deltaX: 0, deltaY: 100, shiftKey: false }, 7, 500);
    assert.equal(view.range[1], 1700, 'an anchor past the plot is its right edge');
  });

  it('drags the content with the pointer, and scrolls the lanes within their height', () => {
    const { view } = viewOf();
    view.set([1000, 2000]);
    view.drag([1000, 2000], 100, 500);
    assert.deepEqual(view.range, [800, 1800], 'right by a fifth of the plot shows a fifth earlier');
    view.scrollBy(300, 200);
    assert.equal(view.scrollY, 200);
    view.scrollBy(-500, 200);
    assert.equal(view.scrollY, 0);
    view.scrollToShow(400, 50, 300);
    assert.equal(view.scrollY, 150, "the row's bottom at the view's bottom");
    view.scrollToShow(100, 50, 300);
    assert.equal(view.scrollY, 100, "the row's top at the view's top");
    view.clampScroll(60);
    assert.equal(view.scrollY, 60);
  });
});

describe('timeline redraw scheduler', () => {
  it('draws once per frame however often a redraw is asked for, and again when asked after it', () => {
    const frames: (() => void)[] = [];
    let draws = 0;
    const scheduler = new RedrawScheduler(
      () => draws++,
      (cb) => frames.push(cb),
    );
    assert.equal(scheduler.pending, false);
    scheduler.schedule();
    scheduler.schedule();
    scheduler.schedule();
    assert.equal(frames.length, 1, 'one frame asked for');
    assert.equal(scheduler.pending, true);
    assert.equal(draws, 0, 'nothing drawn before the frame');
    frames.shift()!();
    assert.deepEqual([draws, scheduler.pending], [1, false]);
    scheduler.schedule();
    assert.equal(frames.length, 1, 'a new frame after the last was drawn');
    frames.shift()!();
    assert.equal(draws, 2);
  });

  it('lets a draw ask for the next frame (an animation) without losing it', () => {
    const frames: (() => void)[] = [];
    let draws = 0;
    const scheduler: RedrawScheduler = new RedrawScheduler(
      () => {
        if (++draws < 3) scheduler.schedule();
      },
      (cb) => frames.push(cb),
    );
    scheduler.schedule();
    while (frames.length > 0) frames.shift()!();
    assert.equal(draws, 3);
  });
});

describe('timeline selection choices', () => {
  const violation = (index: number, ts: number) => ({ index, node: 'n1', ts, text: 'v' });
  const meta = {
    runs: [{ violations: [violation(5, 100), violation(9, 300)] }, { violations: [violation(2, 200)] }],
  } as unknown as Meta;

  it('goes to the next or previous violation of all runs in time order, wrapping around', () => {
    assert.deepEqual(nextViolation(meta, undefined, undefined, 1), { run: 0, index: 5 });
    assert.deepEqual(nextViolation(meta, undefined, undefined, -1), { run: 0, index: 9 });
    assert.deepEqual(nextViolation(meta, { run: 0, index: 5 }, 100, 1), { run: 1, index: 2 }, 'from a violation, the next in time');
    assert.deepEqual(nextViolation(meta, { run: 0, index: 9 }, 300, 1), { run: 0, index: 5 }, 'wraps');
    assert.deepEqual(nextViolation(meta, { run: 0, index: 7 }, 250, 1), { run: 0, index: 9 }, 'from another event, the first after its time');
    assert.deepEqual(nextViolation(meta, { run: 0, index: 7 }, 250, -1), { run: 1, index: 2 });
    assert.equal(nextViolation({ runs: [{ violations: [] }] } as unknown as Meta, undefined, undefined, 1), undefined);
  });

  it("picks a lane's event in the bucket nearest the position", () => {
    // Two rows of 8 buckets over [0, 80): row 1 has events in buckets 1 and 6.
    const top = new Int32Array(16).fill(-1);
    top[8 + 1] = 41;
    top[8 + 6] = 46;
    const data = { from: 0, to: 80, width: 8, top };
    assert.equal(nearestInRow(data, 1, 55), 46);
    assert.equal(nearestInRow(data, 1, 35), 41, 'left first on a tie (buckets 1 and 5 are both two away from 3)');
    assert.equal(nearestInRow(data, 1, 79), 46, 'from the last bucket');
    assert.equal(nearestInRow(data, 0, 40), undefined, 'an empty lane');
  });
});
