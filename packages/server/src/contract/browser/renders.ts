/**
 * The one-shot render on the wire: a page (a URL or inline HTML) loaded once in a fresh browser, the actions run
 * on it, and what it answers. Each action is `type` plus the fields of the interaction of that name without the
 * session id (`interactions.ts`), one named schema per type, joined in a union the validator picks a member of by
 * `type` (an OpenAPI discriminator).
 */
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { StringOrNull, StringEnum, type FieldProblem } from '../kit.ts';
import {
  ApiKeyField,
  ClipField,
  DEFAULT_TIMEOUT_MS,
  Format,
  Height,
  MAX_HTML_CHARS,
  MAX_TIMEOUT_MS,
  OptionalSelector,
  Quality,
  SCREENSHOT_FORMATS,
  Url,
  UserAgent,
  WaitUntilField,
  Width,
} from './common.ts';
import {
  CLICK_FIELDS,
  FILL_FIELDS,
  HOVER_FIELDS,
  KEYPRESS_FIELDS,
  NAVIGATE_FIELDS,
  pageActionProblems,
  SCROLL_FIELDS,
  typeFields,
  WAIT_FIELDS,
} from './interactions.ts';

/** The most actions one render runs. */
export const MAX_RENDER_ACTIONS = 50;

/** A render action: its `type` (the interaction's name) and that interaction's fields. */
function renderAction<const T extends string, P extends TProperties>(type: T, id: string, fields: P, description: string) {
  return Type.Object({ type: Type.Literal(type, { description: 'The interaction' }), ...fields }, { $id: id, title: id, description });
}

export const BrowserRenderNavigateAction = renderAction(
  'navigate',
  'BrowserRenderNavigateAction',
  NAVIGATE_FIELDS,
  'Go to another page, as `POST /v1/browser/interactions/navigate`: `{"type":"navigate","url":"https://example.com/next"}`',
);
export const BrowserRenderClickAction = renderAction(
  'click',
  'BrowserRenderClickAction',
  CLICK_FIELDS,
  'Click an element, as `POST /v1/browser/interactions/click`: `{"type":"click","selector":"#accept"}`',
);
export const BrowserRenderTypeAction = renderAction(
  'type',
  'BrowserRenderTypeAction',
  typeFields(0),
  'Type text key by key, as `POST /v1/browser/interactions/type` (no delay between keys unless `delay` says so)',
);
export const BrowserRenderFillAction = renderAction(
  'fill',
  'BrowserRenderFillAction',
  FILL_FIELDS,
  'Set a form field\'s value, as `POST /v1/browser/interactions/fill`: `{"type":"fill","selector":"#q","value":"otters"}`',
);
export const BrowserRenderScrollAction = renderAction(
  'scroll',
  'BrowserRenderScrollAction',
  SCROLL_FIELDS,
  'Scroll an element into view, or the page to `x`/`y`, as `POST /v1/browser/interactions/scroll` (give `selector`, or `x` and/or `y`)',
);
export const BrowserRenderWaitAction = renderAction(
  'wait',
  'BrowserRenderWaitAction',
  WAIT_FIELDS,
  'Wait for an element, a load state or a time, as `POST /v1/browser/interactions/wait`: `{"type":"wait","condition":"networkidle"}`',
);
export const BrowserRenderHoverAction = renderAction(
  'hover',
  'BrowserRenderHoverAction',
  HOVER_FIELDS,
  'Move the mouse over an element, as `POST /v1/browser/interactions/hover`',
);
export const BrowserRenderKeyPressAction = renderAction(
  'keypress',
  'BrowserRenderKeyPressAction',
  KEYPRESS_FIELDS,
  'Press a key or a chord, as `POST /v1/browser/interactions/keypress`: `{"type":"keypress","key":"Enter"}`',
);

/** Every render action schema, in the order the union lists them. */
export const RENDER_ACTION_SCHEMAS = [
  BrowserRenderNavigateAction,
  BrowserRenderClickAction,
  BrowserRenderTypeAction,
  BrowserRenderFillAction,
  BrowserRenderScrollAction,
  BrowserRenderWaitAction,
  BrowserRenderHoverAction,
  BrowserRenderKeyPressAction,
] as const;

/** The `$id` a named schema was declared with (TypeBox's types do not carry it). */
const idOf = (schema: TSchema): string => (schema as { $id: string }).$id;

/** One of the actions: the union of the members' types, told apart by `type`. */
export type BrowserRenderAction = { [K in keyof typeof RENDER_ACTION_SCHEMAS]: Static<(typeof RENDER_ACTION_SCHEMAS)[K]> }[number];
export type RenderActionType = BrowserRenderAction['type'];

/**
 * The union, published as `oneOf` references with a discriminator: the validator checks the one member `type`
 * names (an unknown type is a 422 at `type`), and generated clients get a tagged union.
 */
export const BrowserRenderAction = Type.Unsafe<BrowserRenderAction>({
  $id: 'BrowserRenderAction',
  title: 'BrowserRenderAction',
  description: "An interaction run after the page loaded: `type` and the fields of that interaction's request without `session_id`",
  type: 'object',
  oneOf: RENDER_ACTION_SCHEMAS.map((schema) => Type.Ref(idOf(schema))),
  discriminator: { propertyName: 'type' },
});

export const BrowserRenderRequest = Type.Object(
  {
    url: Type.Optional(Type.Union([Url('The page to render (http, https, data or about); give `url` or `html`'), Type.Null()])),
    html: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1, maxLength: MAX_HTML_CHARS, description: `A document to render instead of a URL (at most ${MAX_HTML_CHARS} characters)` }),
        Type.Null(),
      ]),
    ),
    width: Type.Optional(Width),
    height: Type.Optional(Height),
    user_agent: UserAgent,
    wait_until: Type.Optional(WaitUntilField),
    wait_for_selector: OptionalSelector('Also wait until this element is visible'),
    wait_timeout: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_TIMEOUT_MS,
        default: DEFAULT_TIMEOUT_MS,
        description: `Milliseconds for loading and \`wait_for_selector\` together (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS})`,
      }),
    ),
    full_page: Type.Optional(Type.Boolean({ default: false, description: 'The whole scrollable page instead of the viewport (default false)' })),
    clip: ClipField,
    format: Type.Optional(Format),
    quality: Quality,
    return_html: Type.Optional(Type.Boolean({ default: false, description: "Answer the page's HTML after the actions ran (default false)" })),
    return_text: Type.Optional(Type.Boolean({ default: false, description: "Answer the page's readable text (default false)" })),
    return_screenshot: Type.Optional(
      Type.Boolean({ default: true, description: 'Answer a screenshot, base64 (default true); it is stored either way while retention keeps it' }),
    ),
    actions: Type.Optional(
      Type.Array(Type.Ref('BrowserRenderAction') as unknown as typeof BrowserRenderAction, {
        maxItems: MAX_RENDER_ACTIONS,
        description: `Interactions run in order after loading (at most ${MAX_RENDER_ACTIONS})`,
      }),
    ),
    api_key: ApiKeyField,
  },
  { $id: 'BrowserRenderRequest', title: 'BrowserRenderRequest', description: 'Give exactly one of `url` and `html`' },
);
export type BrowserRenderRequest = Static<typeof BrowserRenderRequest>;

export const BrowserRenderResponse = Type.Object(
  {
    success: Type.Boolean(),
    usage_id: Type.Integer({ description: 'The usage record of this render (`GET /v1/browser/screenshot/{usage_id}`)' }),
    url: Type.String({ description: 'The final URL, after redirects' }),
    title: Type.String(),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The main document's HTTP status; null for inline HTML" }),
    screenshot: Type.Union([Type.String(), Type.Null()], { description: 'The image, base64; null when `return_screenshot` was false' }),
    format: Type.Union([StringEnum(SCREENSHOT_FORMATS), Type.Null()]),
    width: Type.Integer({ description: 'Image width, pixels' }),
    height: Type.Integer({ description: 'Image height, pixels' }),
    html: StringOrNull,
    text: StringOrNull,
    execution_time: Type.Number({ description: 'Seconds' }),
    screenshot_url: Type.Union([Type.String(), Type.Null()], { description: 'Where the stored screenshot can be fetched again while retention keeps it' }),
  },
  { $id: 'BrowserRenderResponse', title: 'BrowserRenderResponse' },
);
export type BrowserRenderResponse = Static<typeof BrowserRenderResponse>;

/** The named schemas of a render, in the order they are registered (the union's members before the union). */
export const RENDER_SCHEMAS: TSchema[] = [...RENDER_ACTION_SCHEMAS, BrowserRenderAction, BrowserRenderRequest, BrowserRenderResponse];

const given = (value: unknown) => value !== undefined && value !== null;

/**
 * What is wrong with a render request beyond what its schema says: exactly one of `url` and `html`, and each
 * action's own rules (`pageActionProblems`). Empty when nothing is.
 */
export function renderRequestProblems(body: Pick<BrowserRenderRequest, 'url' | 'html' | 'actions'>): FieldProblem[] {
  if (given(body.url) === given(body.html)) {
    return [{ loc: ['body'], msg: given(body.url) ? 'Give url or html, not both' : 'Give the page to render: url or html', type: 'value_error' }];
  }
  return (body.actions ?? []).flatMap((action, index) => pageActionProblems(action.type, action, ['body', 'actions', index]));
}
