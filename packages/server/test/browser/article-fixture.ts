/**
 * An article page as news sites make them, for the content extraction tests (content-extraction.test.ts in the
 * host's Chromium, browser.test.ts through the API on a browser VM): a nav bar, a cookie banner fixed over the
 * page, a byline, headings, paragraphs with a link, an ad slot inside the article, a list, a hidden note, a
 * sidebar, a newsletter form and a footer; and what its readable content must be.
 */

export const PARAGRAPHS = [
  'The Analytical Engine was a proposed mechanical general-purpose computer designed by Charles Babbage. It was first described in 1837 as the successor to the Difference Engine, a simpler mechanical calculator.',
  'The engine has an arithmetic logic unit called the mill, control flow in the form of conditional branching and loops, and integrated memory called the store. Programs were to be read from punched cards, an idea borrowed from the Jacquard loom.',
  'Babbage was never able to complete construction of any of his machines, owing to conflicts with his chief engineer and inadequate funding. Yet the design anticipated much of the architecture of modern computers by a century.',
] as const;
export const SUBHEADING = 'How the engine computes';
export const LIST_ITEMS = ['The mill performs the four arithmetic operations.', 'The store holds one thousand numbers of forty digits.'] as const;

/** The article as the reader should get it: blocks apart by a blank line, list items on lines of their own. */
export const ARTICLE_TEXT = [PARAGRAPHS[0], SUBHEADING, PARAGRAPHS[1], PARAGRAPHS[2], LIST_ITEMS.join('\n')].join('\n\n');

/** Text of the page that is not the article: none of it may be in the readable content. */
export const CLUTTER = [
  'Technology', // the nav bar
  'Subscribe to Example News',
  'We use cookies', // the cookie banner (fixed at the bottom of the viewport)
  'Accept all cookies',
  'Advertisement', // the ad slot inside the article
  'SuperPhone',
  'Most read', // the sidebar
  'Ten facts about steam',
  'Sign up', // the newsletter form
  'All rights reserved', // the footer
  'A note the page does not show', // display: none
];

export const ARTICLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>How the Analytical Engine computes | Example News</title>
<style>
  .cookie-banner { position: fixed; bottom: 0; left: 0; right: 0; padding: 1em; background: #333; color: #fff; }
  .collapsed { display: none; }
  main { display: flex; gap: 2em; }
  article { max-width: 40em; }
  footer { margin-top: 1500px; }
</style>
</head>
<body>
<header class="site-header">
  <nav class="main-nav">
    <a href="/">Home</a> <a href="/world">World</a> <a href="/technology">Technology</a> <a href="/sport">Sport</a>
    <a href="/subscribe">Subscribe to Example News</a>
  </nav>
</header>
<div class="cookie-banner" id="cookies">We use cookies to improve your experience on Example News. <button id="accept-cookies">Accept all cookies</button></div>
<main>
  <article>
    <h1>How the Analytical Engine computes</h1>
    <p class="byline">By Ada Lovelace</p>
    <p>${PARAGRAPHS[0]}</p>
    <h2>${SUBHEADING}</h2>
    <p>${PARAGRAPHS[1].replace('punched cards', '<a id="cards" href="/punched-cards">punched cards</a>')}</p>
    <div class="ad-slot"><span>Advertisement</span> Buy the new SuperPhone 12 today and save forty percent on every accessory.</div>
    <p>${PARAGRAPHS[2]}</p>
    <ul>
      ${LIST_ITEMS.map((item) => `<li>${item}</li>`).join('\n      ')}
    </ul>
    <p class="collapsed">A note the page does not show.</p>
  </article>
  <aside class="sidebar">
    <h3>Most read</h3>
    <ul><li><a href="/story-1">Ten facts about steam</a></li><li><a href="/story-2">The history of the loom</a></li></ul>
  </aside>
</main>
<form id="newsletter">
  <label>Email <input type="email" id="newsletter-email" name="email" placeholder="you@example.com"></label>
  <label><input type="checkbox" id="weekly" name="weekly"> Weekly</label>
  <button type="submit" id="signup">Sign up</button>
</form>
<footer class="site-footer">
  <p>Copyright 2026 Example News. All rights reserved.</p>
  <a href="/privacy">Privacy policy</a>
</footer>
</body>
</html>`;
