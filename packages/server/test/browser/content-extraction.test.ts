/**
 * What `content` reads from a page (`CONTENT_SCRIPT`: Mozilla's Readability on a copy of the document, the
 * interactive elements, the content anchors), run in the host's Chromium on fixture pages, no VM: the shape the
 * published InstaVM client reads (`readable_content.byline`/`word_count`, `interactive_type`, `position`, anchors
 * with `length`). An article page with a nav bar, a cookie banner, an ad slot, a sidebar and a footer reads as its
 * article alone; a page that is no article (a bare form) reads as its visible text. The same answer through the
 * API on a real browser VM is in browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { call, CONTENT_SCRIPT } from '../../src/browser/page-scripts.ts';
import type { PageContent } from '../../src/core/browser/browser-driver.ts';
import { ARTICLE_PAGE, ARTICLE_TEXT, CLUTTER, LIST_ITEMS, PARAGRAPHS, SUBHEADING } from './article-fixture.ts';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

const FORM_PAGE = `<!doctype html>
<html><head><title>Sign in</title></head>
<body>
<h1>Sign in</h1>
<form>
  <label>Username <input name="user"></label>
  <label>Password <input type="password" name="password"></label>
  <button>Sign in</button>
</form>
</body></html>`;

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('content extraction in the page (host Chromium, no VM)', () => {
  let browser: Browser;
  let page: Page;

  before(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  });
  after(() => browser?.close());

  async function read(html: string, options: { maxAnchors?: number; maxInteractive?: number } = {}): Promise<PageContent> {
    await page.setContent(html);
    return readAgain(options);
  }
  const readAgain = (options: { maxAnchors?: number; maxInteractive?: number } = {}) =>
    page.evaluate(call(CONTENT_SCRIPT, { maxAnchors: options.maxAnchors ?? 50, maxInteractive: options.maxInteractive ?? 200 })) as Promise<PageContent>;

  test("an article page reads as its article: its paragraphs, heading and list, none of the page's clutter", async () => {
    const content = await read(ARTICLE_PAGE);
    const readable = content.readable;
    assert.equal(readable.extractor, 'readability');
    assert.equal(readable.content, ARTICLE_TEXT);
    for (const clutter of CLUTTER) assert.ok(!readable.content.includes(clutter), `no "${clutter}" in the readable content`);
    assert.equal(readable.byline, 'By Ada Lovelace');
    assert.equal(readable.title, 'How the Analytical Engine computes', "Readability's title, without the site name");
    assert.equal(content.title, 'How the Analytical Engine computes | Example News', "the document's title");
    assert.equal(readable.excerpt, PARAGRAPHS[0]);
    assert.equal(readable.word_count, words(ARTICLE_TEXT));
    assert.equal(readable.word_count, 127);
    assert.equal(readable.length, ARTICLE_TEXT.length);
  });

  test('reading the page leaves it as it was: no attribute, global or node of the extraction stays behind', async () => {
    await page.setContent(ARTICLE_PAGE);
    const before = await page.evaluate('document.documentElement.outerHTML');
    await readAgain();
    assert.equal(await page.evaluate('document.documentElement.outerHTML'), before);
    assert.deepEqual(await page.evaluate('[typeof Readability, typeof isProbablyReaderable, typeof module]'), ['undefined', 'undefined', 'undefined']);
  });

  test('interactive elements carry interactive_type, their tag and their position on the page', async () => {
    const content = await read(ARTICLE_PAGE);
    const bySelector = new Map(content.interactive.map((element) => [element.selector, element]));
    for (const element of content.interactive) {
      assert.ok(element.interactive_type, `${element.selector} has an interactive_type`);
      assert.ok(element.position.width > 0 && element.position.height > 0, `${element.selector} has a box: ${JSON.stringify(element.position)}`);
    }
    const kinds = (selector: string) => {
      const element = bySelector.get(selector);
      assert.ok(element, `${selector} is listed: ${[...bySelector.keys()].join(', ')}`);
      return [element.interactive_type, element.type, element.tag];
    };
    assert.deepEqual(kinds('#signup'), ['button', 'button', 'button']);
    assert.deepEqual(kinds('#accept-cookies'), ['button', 'button', 'button'], 'the cookie banner can still be clicked away');
    assert.deepEqual(kinds('#newsletter-email'), ['input', 'input', 'input']);
    assert.deepEqual(kinds('#weekly'), ['checkbox', 'input', 'input']);
    assert.deepEqual(kinds('#cards'), ['link', 'link', 'a']);
    assert.equal(bySelector.get('#cards')?.attributes.href, '/punched-cards');
    assert.equal(bySelector.get('#newsletter-email')?.attributes.placeholder, 'you@example.com');

    // Page coordinates, rounded: the box the page lays out, wherever the window is scrolled.
    const box = (await page.evaluate(
      `(() => { const r = document.getElementById('signup').getBoundingClientRect(); return { x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY), width: Math.round(r.width), height: Math.round(r.height) }; })()`,
    )) as object;
    assert.deepEqual(bySelector.get('#signup')?.position, box);
    await page.evaluate('window.scrollTo(0, 400)');
    const scrolled = await readAgain();
    assert.deepEqual(scrolled.interactive.find((element) => element.selector === '#signup')?.position, box, 'scrolling does not move it');
  });

  test("anchors are the article's headings, paragraphs, list items and links, then the page's other links, each found again by its selector", async () => {
    const content = await read(ARTICLE_PAGE);
    const anchors = content.anchors;
    const blocks = anchors.filter((anchor) => anchor.href === null);
    assert.deepEqual(
      blocks.map((anchor) => [anchor.tag, anchor.length]),
      [
        ['p', PARAGRAPHS[0].length],
        ['h2', SUBHEADING.length],
        ['p', PARAGRAPHS[1].length],
        ['p', PARAGRAPHS[2].length],
        ['li', LIST_ITEMS[0].length],
        ['li', LIST_ITEMS[1].length],
      ],
      'the blocks of the article, in order, and nothing else (not the byline, the ad, the footer)',
    );
    assert.equal(blocks[0]!.text, PARAGRAPHS[0].slice(0, 200), 'a long block: its first 200 characters, `length` counts all');
    assert.equal(blocks[1]!.text, SUBHEADING);

    for (const anchor of anchors) {
      const found = squash(String(await page.evaluate(`document.querySelector(${JSON.stringify(anchor.selector)}).innerText`)));
      assert.ok(found.startsWith(anchor.text), `${anchor.selector} finds "${anchor.text}" again (it reads "${found.slice(0, 80)}")`);
      assert.equal(anchor.length >= anchor.text.length, true);
    }

    const links = anchors.filter((anchor) => anchor.href !== null);
    assert.deepEqual(
      links.map((anchor) => [anchor.tag, anchor.text, new URL(anchor.href!, 'http://x').pathname]),
      [
        ['a', 'punched cards', '/punched-cards'],
        ['a', 'Home', '/'],
        ['a', 'World', '/world'],
        ['a', 'Technology', '/technology'],
        ['a', 'Sport', '/sport'],
        ['a', 'Subscribe to Example News', '/subscribe'],
        ['a', 'Ten facts about steam', '/story-1'],
        ['a', 'The history of the loom', '/story-2'],
        ['a', 'Privacy policy', '/privacy'],
      ],
      "the article's link among its blocks, then the page's other links in document order",
    );
    assert.ok(
      anchors.findIndex((anchor) => anchor.text === 'punched cards') < anchors.findIndex((anchor) => anchor.tag === 'li'),
      'a link of the article comes where it is in the article',
    );

    assert.equal((await readAgain({ maxAnchors: 3 })).anchors.length, 3, 'max_anchors');
    const none = await readAgain({ maxAnchors: 0, maxInteractive: 0 });
    assert.deepEqual([none.anchors, none.interactive], [[], []]);
    assert.equal(none.readable.content, ARTICLE_TEXT);
  });

  test('a page that is no article (a bare form) reads as its visible text, with no byline', async () => {
    const content = await read(FORM_PAGE);
    const visibleText = String(await page.evaluate('document.body.innerText')).trim();
    assert.equal(content.readable.extractor, 'page_text');
    assert.equal(content.readable.content, visibleText);
    assert.match(content.readable.content, /^Sign in\nUsername +Password +Sign in$/);
    assert.deepEqual(
      [content.readable.title, content.readable.byline, content.readable.excerpt, content.readable.site_name, content.readable.published_time],
      ['Sign in', null, null, null, null],
    );
    assert.equal(content.readable.word_count, words(visibleText));
    assert.equal(content.readable.length, visibleText.length);
    assert.deepEqual(
      content.interactive.map((element) => element.interactive_type),
      ['input', 'input', 'button'],
    );
    assert.deepEqual(
      content.anchors.map((anchor) => [anchor.tag, anchor.text]),
      [
        ['h1', 'Sign in'],
        ['label', 'Username'],
        ['label', 'Password'],
      ],
    );
  });
});
