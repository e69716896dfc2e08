/**
 * Scripts evaluated in the page, as source text: a function handed to `page.evaluate` is serialized with
 * `toString()`, and the TypeScript loader may add helpers to compiled functions (`__name`) that do not exist in
 * the page. Each script is an expression of a function taking one JSON argument.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';

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

/**
 * Mozilla's Readability (`@mozilla/readability`, Apache-2.0) and its `isProbablyReaderable`, as the page gets them:
 * each file's source inside a function of its own, so that nothing leaks into the page's globals and the files'
 * `module.exports` line finds no `module` (a page may define one). Read once, when this module loads; the server
 * runs from its sources (no bundle), so the files are where Node resolves them.
 */
const requireHere = createRequire(import.meta.url);
const readabilitySource = (file: string) => fs.readFileSync(requireHere.resolve(`@mozilla/readability/${file}`), 'utf8');
const READABILITY = `
const Readability = (function () { var module = undefined;
${readabilitySource('Readability.js')}
return Readability; })();
const isProbablyReaderable = (function () { var module = undefined;
${readabilitySource('Readability-readerable.js')}
return isProbablyReaderable; })();
`;

/**
 * Argument `{maxAnchors, maxInteractive}` → the page as an LLM should read it (`PageContent`): the readable
 * content, the interactive elements (0: none) and the content anchors (0: none).
 *
 * Readable content: Readability runs on a copy of the document (`cloneNode`: the page itself is not touched) less
 * what the page does not show and the clutter Readability does not know by name (ad slots, fixed overlays such as
 * cookie banners). Its article, as text with paragraph breaks, is the content when the page reads as an article
 * (`isProbablyReaderable`, Firefox's test for offering Reader View) or the article holds at least 500 characters
 * (Readability's own threshold); otherwise (a form, a list of links, nothing found, Readability failing) the content
 * is the page's visible text (`innerText`).
 *
 * Each element of the copy's body carries an attribute naming its index among the page's elements
 * (`data-sandboxd-i-<index>`): Readability keeps attributes when it renames an element (div → p) and copies a
 * parent's onto its only child when it folds the two, so the article's elements name the page's elements they came
 * from. Anchors: the text blocks and links among those (else among all of the page's), in document order, then the
 * page's other links, at most `maxAnchors`.
 */
export const CONTENT_SCRIPT = `(function (arg) {
${CSS_PATH}
${READABILITY}
  const INDEX = 'data-sandboxd-i-';
  const ARTICLE_MIN_CHARS = 500;
  const BLOCKS = 'h1, h2, h3, h4, h5, h6, p, li, blockquote, pre, dt, dd, figcaption, summary, caption, legend, label';
  const CONTAINERS = 'body, div, section, article, main, aside, header, footer, td, th';
  const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'select', 'textarea', 'option', 'datalist', 'iframe', 'object']);
  const squash = (text) => (text || '').replace(/\\s+/g, ' ').trim();
  const body = document.body;
  const elements = body ? Array.prototype.slice.call(body.getElementsByTagName('*')) : [];
  const hidden = new Set();

  // An element the page does not show: it, or an ancestor, is display:none or visibility:hidden (an element of
  // display:contents has no box of its own but shows its children).
  function shown(el) {
    if (typeof el.checkVisibility !== 'function') return true;
    return el.checkVisibility({ checkVisibilityCSS: true, visibilityProperty: true }) || getComputedStyle(el).display === 'contents';
  }

  // The article's text: blocks on lines of their own, a blank line after paragraphs, headings, lists and tables,
  // table cells apart by a tab, whitespace collapsed as a browser shows it (kept in <pre>).
  const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'ul', 'ol', 'dl', 'table', 'figure', 'hr']);
  const LINES = new Set(['address', 'article', 'aside', 'caption', 'center', 'dd', 'details', 'div', 'dt', 'fieldset', 'figcaption', 'footer', 'form', 'header', 'legend', 'li', 'main', 'nav', 'section', 'summary', 'tbody', 'tfoot', 'thead', 'tr']);
  function textOf(root) {
    let out = '';
    let owed = 0;
    const breakLine = (count) => {
      out = out.replace(/[ \\t]+$/, '');
      const have = out.match(/\\n*$/)[0].length;
      if (out && count > have) out += '\\n'.repeat(count - have);
    };
    const put = (text, pre) => {
      if (!pre) {
        text = text.replace(/\\s+/g, ' ');
        if (text === '') return;
        if (text === ' ') {
          if (!owed && out && !/\\s$/.test(out)) out += ' ';
          return;
        }
      }
      if (owed) {
        breakLine(owed);
        owed = 0;
      }
      if (!pre && (out === '' || /\\s$/.test(out))) text = text.replace(/^ /, '');
      out += text;
    };
    const walk = (node, pre) => {
      for (const child of node.childNodes) {
        if (child.nodeType === 3) {
          put(child.nodeValue, pre);
          continue;
        }
        if (child.nodeType !== 1 || SKIPPED.has(child.localName)) continue;
        const tag = child.localName;
        if (tag === 'br') {
          if (owed) breakLine(owed);
          owed = 0;
          out = out.replace(/[ \\t]+$/, '') + '\\n';
          continue;
        }
        if ((tag === 'td' || tag === 'th') && !owed && out && !/\\s$/.test(out)) out += '\\t';
        const breaks = PARAGRAPHS.has(tag) ? 2 : LINES.has(tag) ? 1 : 0;
        owed = Math.max(owed, breaks);
        walk(child, pre || tag === 'pre');
        owed = Math.max(owed, breaks);
      }
    };
    walk(root, false);
    return out.replace(/[ \\t]+\\n/g, '\\n').replace(/\\n{3,}/g, '\\n\\n').trim();
  }

  // ---- Readable content ----
  const pageText = body ? body.innerText.replace(/[ \\t]+\\n/g, '\\n').replace(/\\n{3,}/g, '\\n\\n').trim() : '';
  // Clutter Readability does not know by name: ad slots (a class or id token such as 'ad', 'ad-slot',
  // 'sponsored'; their ads are frames, their labels text) and what floats over the page (position: fixed: cookie
  // and consent banners, sticky headers, share bars); never something that holds a fifth of the page's text.
  const AD = /^(ads?|adverts?|advertisements?|advertising|sponsored|adsbygoogle)([-_]|$)|[-_](ads?|adverts?|advertisements?|advertising|sponsored)([-_]|$)/i;
  const clutterLimit = pageText.length / 5;
  function clutter(el) {
    const names = ((el.getAttribute('class') || '') + ' ' + el.id).split(/\\s+/);
    const ad = names.some((name) => AD.test(name)) || /^advertisement$/i.test(el.getAttribute('aria-label') || '');
    if (!ad && getComputedStyle(el).position !== 'fixed') return false;
    return el.innerText.length <= clutterLimit;
  }
  let readable = null;
  let scope = null;
  if (body) {
    try {
      const copy = document.cloneNode(true);
      const copies = copy.body ? Array.prototype.slice.call(copy.body.getElementsByTagName('*')) : [];
      if (copies.length === elements.length) {
        const cut = new Set();
        for (let i = 0; i < elements.length; i++) {
          const el = elements[i];
          if (hidden.has(el.parentElement)) hidden.add(el);
          else if (!shown(el)) {
            hidden.add(el);
            copies[i].remove();
          } else if (cut.has(el.parentElement)) cut.add(el);
          else if (clutter(el)) {
            cut.add(el);
            copies[i].remove();
          } else copies[i].setAttribute(INDEX + i, '');
        }
        // Asked before parse(), which takes the copy apart.
        const readerable = isProbablyReaderable(copy);
        const article = new Readability(copy, { serializer: (el) => el }).parse();
        const text = article && article.content ? textOf(article.content) : '';
        // Readability answers something on almost any page (a form's labels, a list of links): that is an article
        // when the page reads as one, or when it holds at least Readability's own threshold of text (500 characters).
        if (text && (readerable || text.length >= ARTICLE_MIN_CHARS)) {
          readable = {
            title: squash(article.title) || document.title,
            byline: squash(article.byline) || null,
            excerpt: squash(article.excerpt) || null,
            site_name: squash(article.siteName) || null,
            published_time: squash(article.publishedTime) || null,
            content: text,
            extractor: 'readability',
          };
          const indexes = new Set();
          for (const el of [article.content].concat(Array.prototype.slice.call(article.content.getElementsByTagName('*')))) {
            for (const attribute of el.attributes) {
              if (attribute.name.startsWith(INDEX)) indexes.add(Number(attribute.name.slice(INDEX.length)));
            }
          }
          scope = Array.from(indexes)
            .sort((a, b) => a - b)
            .map((i) => elements[i]);
        }
      }
    } catch (error) {
      // A page Readability cannot read (Trusted Types refusing its innerHTML, a document it does not expect): its text.
      readable = null;
    }
  }
  if (!readable) {
    readable = {
      title: document.title,
      byline: null,
      excerpt: null,
      site_name: null,
      published_time: null,
      content: pageText,
      extractor: 'page_text',
    };
    scope = body ? [body].concat(elements) : [];
  }
  readable.word_count = readable.content.split(/\\s+/).filter(Boolean).length;
  readable.length = readable.content.length;

  // ---- Interactive elements ----
  const kindOf = (el) => {
    const role = el.getAttribute('role');
    if (role === 'button' || role === 'link') return role;
    const tag = el.localName;
    if (tag === 'a') return 'link';
    if (tag === 'button') return 'button';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image') return 'button';
      return type === 'checkbox' || type === 'radio' ? type : 'input';
    }
    if (tag === 'textarea' || tag === 'select') return tag;
    if (role) return role;
    return el.isContentEditable ? 'editable' : 'clickable';
  };
  const interactive = [];
  const controls = arg.maxInteractive > 0
    ? document.querySelectorAll('a[href], button, input:not([type=hidden]), textarea, select, [role=button], [role=link], [onclick], [contenteditable=""], [contenteditable=true]')
    : [];
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
    const rect = el.getBoundingClientRect();
    interactive.push({
      type,
      interactive_type: kindOf(el),
      tag: el.localName,
      text: clean(el.innerText || el.value || el.getAttribute('aria-label') || el.getAttribute('placeholder') || '', 200),
      selector: cssPath(el),
      attributes,
      position: {
        x: Math.round(rect.left + window.scrollX),
        y: Math.round(rect.top + window.scrollY),
        width: Math.round(rect.width),
        height: Math.round(rect.height),
      },
    });
  }

  // ---- Content anchors ----
  // A text block: a block element (heading, paragraph, list item…), or a container (div, section, cell…) with
  // text of its own or with no block inside. Its text is its own: the blocks inside it are anchors of their own.
  const blocks = new Map();
  function isBlock(el) {
    let block = blocks.get(el);
    if (block !== undefined) return block;
    block = el.matches(BLOCKS);
    if (!block && el.matches(CONTAINERS)) {
      block = Array.prototype.some.call(el.childNodes, (n) => n.nodeType === 3 && n.nodeValue.trim() !== '') || !el.querySelector(BLOCKS + ', ' + CONTAINERS);
    }
    blocks.set(el, block);
    return block;
  }
  function ownText(el) {
    let text = '';
    for (const child of el.childNodes) {
      if (child.nodeType === 3) text += child.nodeValue;
      else if (child.nodeType === 1 && !hidden.has(child) && !SKIPPED.has(child.localName) && !isBlock(child)) text += child.localName === 'br' ? ' ' : ownText(child);
    }
    return text;
  }
  const hrefOf = (a) => (typeof a.href === 'string' ? a.href : a.getAttribute('href')) || null;
  const anchors = [];
  const taken = new Set();
  function addAnchor(el) {
    if (taken.has(el) || hidden.has(el)) return;
    const link = el.matches('a[href]');
    if (!link && !isBlock(el)) return;
    const text = squash(link ? el.innerText || el.textContent || el.getAttribute('aria-label') : ownText(el));
    if (!text || !visible(el)) return;
    if (!link) {
      // A block that is one link says nothing the link does not (and the link has the href).
      const links = el.querySelectorAll('a[href]');
      if (links.length === 1 && squash(links[0].innerText || links[0].textContent) === text) return;
    }
    taken.add(el);
    anchors.push({ text: text.slice(0, 200), selector: cssPath(el), href: link ? hrefOf(el) : null, length: text.length, tag: el.localName });
  }
  if (arg.maxAnchors > 0) {
    for (const el of scope) {
      if (anchors.length >= arg.maxAnchors) break;
      addAnchor(el);
    }
    for (const a of document.querySelectorAll('a[href]')) {
      if (anchors.length >= arg.maxAnchors) break;
      addAnchor(a);
    }
  }
  return { title: document.title, readable, interactive, anchors };
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
