/**
 * Scripts evaluated in the page, as source text: a function handed to `page.evaluate` is serialized with
 * `toString()`, and the TypeScript loader may add helpers to compiled functions (`__name`) that do not exist in
 * the page. Each script is an expression of a function taking one JSON argument.
 */

/** `cssPath(element)`: a selector that finds the element again (its unique id, else a `>` path with nth-of-type). */
const CSS_PATH = `
function cssPath(el) {
  const unique = (e) => e.id && document.querySelectorAll('#' + CSS.escape(e.id)).length === 1;
  if (unique(el)) return '#' + CSS.escape(el.id);
  const parts = [];
  while (el && el.nodeType === 1 && el !== document.documentElement) {
    if (unique(el)) { parts.unshift('#' + CSS.escape(el.id)); break; }
    let part = el.localName;
    const parent = el.parentElement;
    if (parent) {
      const same = Array.prototype.filter.call(parent.children, (c) => c.localName === el.localName);
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(el) + 1) + ')';
    }
    parts.unshift(part);
    el = parent;
  }
  return parts.join(' > ');
}
function visible(el) {
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || style.display === 'none') return false;
  const rect = el.getBoundingClientRect();
  return rect.width > 0 && rect.height > 0;
}
function clean(text, max) {
  const t = (text || '').replace(/\\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max) + '…' : t;
}
`;

/** Argument `{selector, attributes, max}` → the matched elements (at most `max`). */
export const EXTRACT_SCRIPT = `(function (arg) {
${CSS_PATH}
  const nodes = Array.prototype.slice.call(document.querySelectorAll(arg.selector), 0, arg.max);
  return nodes.map((el) => {
    const attributes = {};
    for (const name of arg.attributes) attributes[name] = el.getAttribute(name);
    const isControl = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement;
    return {
      tag: el.localName,
      text: clean(el.innerText !== undefined ? el.innerText : el.textContent, 2000),
      attributes,
      selector: cssPath(el),
      visible: visible(el),
      value: isControl ? el.value : null,
    };
  });
})`;

/** Argument `{maxAnchors, maxInteractive}` → the page as an LLM should read it. */
export const CONTENT_SCRIPT = `(function (arg) {
${CSS_PATH}
  const body = document.body;
  const text = body ? body.innerText.replace(/[ \\t]+\\n/g, '\\n').replace(/\\n{3,}/g, '\\n\\n').trim() : '';
  const interactive = [];
  const controls = document.querySelectorAll('a[href], button, input:not([type=hidden]), textarea, select, [role=button], [role=link], [onclick], [contenteditable=""], [contenteditable=true]');
  for (const el of controls) {
    if (interactive.length >= arg.maxInteractive) break;
    if (!visible(el)) continue;
    const attributes = {};
    for (const name of ['name', 'type', 'placeholder', 'href', 'aria-label', 'role']) {
      const value = el.getAttribute(name);
      if (value !== null) attributes[name] = value;
    }
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) attributes.value = el.value;
    const type = el.localName === 'a' ? 'link' : el.localName === 'input' ? 'input' : el.getAttribute('role') || el.localName;
    interactive.push({ type, text: clean(el.innerText || el.value || el.getAttribute('aria-label') || el.getAttribute('placeholder') || '', 200), selector: cssPath(el), attributes });
  }
  const anchors = [];
  for (const a of document.querySelectorAll('a[href]')) {
    if (anchors.length >= arg.maxAnchors) break;
    const label = clean(a.innerText || a.getAttribute('aria-label') || '', 200);
    if (!label || !visible(a)) continue;
    anchors.push({ text: label, selector: cssPath(a), href: a.href || null });
  }
  return { title: document.title, text, interactive, anchors };
})`;

/** Argument `{x, y}` → scrolls the window there; answers where it ended up. */
export const SCROLL_TO_SCRIPT = `(function (arg) {
  window.scrollTo(arg.x, arg.y);
  return { x: window.scrollX, y: window.scrollY };
})`;

/** The window's scroll position. */
export const SCROLL_POSITION_SCRIPT = `(function () { return { x: window.scrollX, y: window.scrollY }; })`;

/** The page's readable text (for render's `return_text`). */
export const TEXT_SCRIPT = `(function () { return document.body ? document.body.innerText : ''; })`;

/** Calls a script expression with its argument, as one evaluable string. */
export function call(script: string, argument: unknown = null): string {
  return `${script}(${JSON.stringify(argument)})`;
}
