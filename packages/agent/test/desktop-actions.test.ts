import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { InvalidAction, planAction } from '../src/desktop/actions.ts';
import { encodePng, scaleImage } from '../src/desktop/png.ts';
import { parseXwd } from '../src/desktop/xwd.ts';
import { DESKTOP_ACTIONS } from '../src/protocol/desktop.ts';
import { COMPUTER_ACTIONS } from '../../sdk/src/resources/computer-use.ts';

const screen = { width: 1280, height: 800 };

function invalid(body: unknown, loc: string[]): void {
  assert.throws(
    () => planAction(body, screen),
    (error: unknown) => error instanceof InvalidAction && JSON.stringify(error.loc) === JSON.stringify(loc),
    `${JSON.stringify(body)} → ${loc.join('.')}`,
  );
}

describe('computer-use actions → xdotool', () => {
  it('the client library offers exactly the actions the desktop service takes (its copy: it has no dependencies)', () => {
    assert.deepEqual([...COMPUTER_ACTIONS], [...DESKTOP_ACTIONS]);
  });

  it("turns Anthropic's actions into one xdotool command line each", () => {
    assert.deepEqual(planAction({ action: 'left_click', coordinate: [10, 20] }, screen), {
      kind: 'xdotool',
      args: ['mousemove', '10', '20', 'click', '--repeat', '1', '--delay', '80', '1'],
    });
    assert.deepEqual(planAction({ action: 'triple_click' }, screen), { kind: 'xdotool', args: ['click', '--repeat', '3', '--delay', '80', '1'] });
    assert.deepEqual(planAction({ action: 'right_click', coordinate: [0, 0], text: 'shift' }, screen), {
      kind: 'xdotool',
      args: ['keydown', 'shift', 'mousemove', '0', '0', 'click', '--repeat', '1', '--delay', '80', '3', 'keyup', 'shift'],
    });
    assert.deepEqual(planAction({ action: 'left_click_drag', start_coordinate: [1, 2], coordinate: [3, 4] }, screen), {
      kind: 'xdotool',
      args: ['mousemove', '1', '2', 'mousedown', '1', 'mousemove', '3', '4', 'mouseup', '1'],
    });
    assert.deepEqual(planAction({ action: 'scroll', coordinate: [5, 5], scroll_direction: 'down', scroll_amount: 2 }, screen), {
      kind: 'xdotool',
      args: ['mousemove', '5', '5', 'click', '--repeat', '2', '--delay', '30', '5'],
    });
    assert.deepEqual(planAction({ action: 'key', text: 'ctrl+s Return' }, screen), {
      kind: 'xdotool',
      args: ['key', '--delay', '30', '--', 'ctrl+s', 'Return'],
    });
    assert.deepEqual(planAction({ action: 'hold_key', text: 'ctrl+shift', duration: 0.5 }, screen), {
      kind: 'xdotool',
      args: ['keydown', 'ctrl', 'keydown', 'shift', 'sleep', '0.5', 'keyup', 'shift', 'keyup', 'ctrl'],
    });
    assert.deepEqual(planAction({ action: 'wait', duration: 1.5 }, screen), { kind: 'wait', ms: 1500 });
    assert.deepEqual(planAction({ action: 'screenshot' }, screen), { kind: 'screenshot' });
  });

  it('types text as one argument after "--", whatever it contains', () => {
    const text = '--help; rm -rf / $(id) `x` \n"\'';
    assert.deepEqual(planAction({ action: 'type', text }, screen), { kind: 'xdotool', args: ['type', '--delay', '8', '--', text] });
  });

  it('refuses what it cannot do exactly, naming the field', () => {
    invalid({ action: 'fly' }, ['body', 'action']);
    invalid([], ['body']);
    invalid({ action: 'mouse_move' }, ['body', 'coordinate']);
    invalid({ action: 'left_click', coordinate: [1280, 0] }, ['body', 'coordinate']);
    invalid({ action: 'left_click', coordinate: [1.5, 2] }, ['body', 'coordinate']);
    invalid({ action: 'left_click', coordinate: ['1', 2] }, ['body', 'coordinate']);
    invalid({ action: 'scroll', scroll_direction: 'sideways' }, ['body', 'scroll_direction']);
    invalid({ action: 'scroll', scroll_direction: 'up', scroll_amount: 0 }, ['body', 'scroll_amount']);
    invalid({ action: 'key', text: '--window 1 a' }, ['body', 'text']);
    invalid({ action: 'key', text: 'ctrl+;' }, ['body', 'text']);
    invalid({ action: 'type', text: '' }, ['body', 'text']);
    invalid({ action: 'type', text: 'x'.repeat(10_001) }, ['body', 'text']);
    invalid({ action: 'wait', duration: 61 }, ['body', 'duration']);
    invalid({ action: 'hold_key', text: 'a' }, ['body', 'duration']);
  });
});

/** An XWD dump as xwd writes it on x86 (header big-endian, pixels little-endian BGRX). */
function xwdDump(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const name = Buffer.from('xwdump\0\0');
  const header = Buffer.alloc(100);
  const fields = [100 + name.length, 7, 2, 24, width, height, 0, 0, 32, 0, 32, 32, width * 4, 4, 0xff0000, 0xff00, 0xff, 8, 0, 0, width, height, 0, 0, 0];
  fields.forEach((value, i) => header.writeUInt32BE(value, i * 4));
  const pixels = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      pixels.set([b, g, r, 0], (y * width + x) * 4);
    }
  }
  return Buffer.concat([header, name, pixels]);
}

describe('screenshots', () => {
  it('reads an xwd dump into RGB and encodes a PNG that decodes to the same pixels', () => {
    const image = parseXwd(xwdDump(7, 3, (x, y) => [x * 30, y * 100, 200]));
    assert.deepEqual([image.width, image.height], [7, 3]);
    const decoded = PNG.sync.read(encodePng(image));
    assert.deepEqual([decoded.width, decoded.height], [7, 3]);
    const at = 4 * (2 * 7 + 5);
    assert.deepEqual([...decoded.data.subarray(at, at + 4)], [150, 200, 200, 255]);
  });

  it('scales down by averaging, to the size asked', () => {
    const image = parseXwd(xwdDump(4, 2, (x) => (x < 2 ? [0, 0, 0] : [255, 255, 255])));
    const half = scaleImage(image, 2, 1);
    assert.deepEqual([half.width, half.height, ...half.rgb], [2, 1, 0, 0, 0, 255, 255, 255]);
    assert.equal(scaleImage(image, 8, 4), image, 'never scaled up');
  });

  it('refuses a dump it cannot read', () => {
    assert.throws(() => parseXwd(Buffer.alloc(10)), /shorter than its header/);
    const truncated = xwdDump(4, 4, () => [1, 2, 3]).subarray(0, 150);
    assert.throws(() => parseXwd(truncated), /shorter than its pixels/);
  });
});
