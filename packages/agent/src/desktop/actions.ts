/**
 * The computer-use actions AI agents already emit (Anthropic's computer-use tool: `{action, coordinate, text,
 * scroll_direction, scroll_amount, duration, start_coordinate}`), checked and turned into one xdotool command
 * line each: a whole action (move, press, release) is one process, so it cannot be half done by a second request.
 */
import { DESKTOP_ACTIONS, type DesktopActionName } from '../protocol/desktop.ts';

/** A request that cannot be carried out as given (422, with where and what). */
export class InvalidAction extends Error {
  override name = 'InvalidAction';
  constructor(
    readonly loc: string[],
    message: string,
  ) {
    super(message);
  }
}

export const ACTIONS = DESKTOP_ACTIONS;
export type ActionName = DesktopActionName;

export const SCROLL_DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
/** X buttons 4–7 are the wheel's. */
const WHEEL_BUTTON: Record<(typeof SCROLL_DIRECTIONS)[number], string> = { up: '4', down: '5', left: '6', right: '7' };
const CLICKS: Partial<Record<ActionName, { button: string; repeat: number }>> = {
  left_click: { button: '1', repeat: 1 },
  right_click: { button: '3', repeat: 1 },
  middle_click: { button: '2', repeat: 1 },
  double_click: { button: '1', repeat: 2 },
  triple_click: { button: '1', repeat: 3 },
};
export const MAX_TYPE_CHARS = 10_000;
export const MAX_WAIT_SECONDS = 60;
/** Milliseconds between typed characters: X clients see each key event, and TCG guests keep up. */
const TYPE_DELAY_MS = '8';

/** A key, or a combination like `ctrl+shift+t`, in xdotool's (X keysym) names; several separated by spaces. */
const KEY_COMBO = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$/;

export interface ScreenSize {
  width: number;
  height: number;
}

/** What to do for one action: an xdotool command line, a pause, or a read. */
export type Plan = { kind: 'xdotool'; args: string[] } | { kind: 'wait'; ms: number } | { kind: 'screenshot' } | { kind: 'cursor_position' };

type Body = Record<string, unknown>;

function coordinate(body: Body, field: string, screen: ScreenSize, required: boolean): [number, number] | null {
  const value = body[field];
  if (value === undefined || value === null) {
    if (required) throw new InvalidAction(['body', field], `${field} is required for action ${String(body.action)}: [x, y] in screen pixels`);
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => Number.isInteger(n))) {
    throw new InvalidAction(['body', field], `${field} must be [x, y], two integers`);
  }
  const [x, y] = value as [number, number];
  if (x < 0 || y < 0 || x >= screen.width || y >= screen.height) {
    throw new InvalidAction(['body', field], `${field} [${x}, ${y}] is outside the ${screen.width}×${screen.height} screen`);
  }
  return [x, y];
}

function text(body: Body, required: boolean, max: number): string | null {
  const value = body.text;
  if (value === undefined || value === null) {
    if (required) throw new InvalidAction(['body', 'text'], `text is required for action ${String(body.action)}`);
    return null;
  }
  if (typeof value !== 'string' || value.length === 0) throw new InvalidAction(['body', 'text'], 'text must be a non-empty string');
  if (value.length > max) throw new InvalidAction(['body', 'text'], `text is longer than ${max} characters`);
  return value;
}

/** `ctrl+s`, `Return`, `alt+Tab super` → xdotool's key arguments; anything else is refused before xdotool sees it. */
function keys(value: string, field: string): string[] {
  const combos = value.trim().split(/\s+/);
  if (combos.length > 32 || !combos.every((combo) => KEY_COMBO.test(combo))) {
    throw new InvalidAction(['body', field], 'keys are X keysym names joined by "+" (e.g. "ctrl+s", "Return", "alt+Tab"), several separated by spaces');
  }
  return combos;
}

function seconds(body: Body, field: string, max: number): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw new InvalidAction(['body', field], `${field} must be a number of seconds from 0 to ${max}`);
  }
  return value;
}

/** Modifier keys held during a click or scroll (the tool's `text` on those actions, e.g. "shift" or "ctrl+alt"). */
function held(body: Body): { down: string[]; up: string[] } {
  const modifiers = text(body, false, 100);
  if (modifiers === null) return { down: [], up: [] };
  const names = keys(modifiers, 'text').flatMap((combo) => combo.split('+'));
  return { down: names.flatMap((name) => ['keydown', name]), up: names.reverse().flatMap((name) => ['keyup', name]) };
}

/** Checks an action request against the screen and plans it; throws InvalidAction. */
export function planAction(body: unknown, screen: ScreenSize): Plan {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidAction(['body'], 'the body must be a JSON object with an "action"');
  const request = body as Body;
  const action = request.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    throw new InvalidAction(['body', 'action'], `action must be one of ${ACTIONS.join(', ')}`);
  }
  const name = action as ActionName;
  const move = (at: [number, number] | null): string[] => (at ? ['mousemove', String(at[0]), String(at[1])] : []);
  const click = CLICKS[name];
  if (click) {
    const modifiers = held(request);
    return {
      kind: 'xdotool',
      args: [
        ...modifiers.down,
        ...move(coordinate(request, 'coordinate', screen, false)),
        'click',
        '--repeat',
        String(click.repeat),
        '--delay',
        '80',
        click.button,
        ...modifiers.up,
      ],
    };
  }
  switch (name) {
    case 'screenshot':
      return { kind: 'screenshot' };
    case 'cursor_position':
      return { kind: 'cursor_position' };
    case 'mouse_move':
      return { kind: 'xdotool', args: move(coordinate(request, 'coordinate', screen, true)) };
    case 'left_click_drag': {
      const from = coordinate(request, 'start_coordinate', screen, true);
      const to = coordinate(request, 'coordinate', screen, true);
      return { kind: 'xdotool', args: [...move(from), 'mousedown', '1', ...move(to), 'mouseup', '1'] };
    }
    case 'left_mouse_down':
      return { kind: 'xdotool', args: [...move(coordinate(request, 'coordinate', screen, false)), 'mousedown', '1'] };
    case 'left_mouse_up':
      return { kind: 'xdotool', args: [...move(coordinate(request, 'coordinate', screen, false)), 'mouseup', '1'] };
    case 'scroll': {
      const direction = request.scroll_direction;
      if (typeof direction !== 'string' || !(SCROLL_DIRECTIONS as readonly string[]).includes(direction)) {
        throw new InvalidAction(['body', 'scroll_direction'], `scroll_direction must be one of ${SCROLL_DIRECTIONS.join(', ')}`);
      }
      const amount = request.scroll_amount ?? 3;
      if (!Number.isInteger(amount) || (amount as number) < 1 || (amount as number) > 100) {
        throw new InvalidAction(['body', 'scroll_amount'], 'scroll_amount must be an integer from 1 to 100 (wheel clicks)');
      }
      const modifiers = held(request);
      return {
        kind: 'xdotool',
        args: [
          ...modifiers.down,
          ...move(coordinate(request, 'coordinate', screen, false)),
          'click',
          '--repeat',
          String(amount),
          '--delay',
          '30',
          WHEEL_BUTTON[direction as (typeof SCROLL_DIRECTIONS)[number]],
          ...modifiers.up,
        ],
      };
    }
    case 'type':
      return { kind: 'xdotool', args: ['type', '--delay', TYPE_DELAY_MS, '--', text(request, true, MAX_TYPE_CHARS)!] };
    case 'key':
      return { kind: 'xdotool', args: ['key', '--delay', '30', '--', ...keys(text(request, true, 500)!, 'text')] };
    case 'hold_key': {
      const combos = keys(text(request, true, 100)!, 'text').flatMap((combo) => combo.split('+'));
      const duration = seconds(request, 'duration', MAX_WAIT_SECONDS);
      return {
        kind: 'xdotool',
        args: [...combos.flatMap((key) => ['keydown', key]), 'sleep', String(duration), ...combos.reverse().flatMap((key) => ['keyup', key])],
      };
    }
    case 'wait':
      return { kind: 'wait', ms: Math.round(seconds(request, 'duration', MAX_WAIT_SECONDS) * 1000) };
  }
  throw new InvalidAction(['body', 'action'], `unhandled action ${name}`);
}
