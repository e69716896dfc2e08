/**
 * Every relative link of the README and of docs/ reaches a file that exists (and, with an #anchor into a markdown
 * file, a heading or an `<a id>` of that name), so moving a page cannot leave readers at a dead end. The generated
 * API reference (docs/reference/api/index.html, written by the set-up) is a link target whether or not it is built.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPOSITORY } from './quickstart-blocks.ts';

const GENERATED = new Set([path.join(REPOSITORY, 'docs/reference/api/index.html')]);

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'screenshots' ? [] : markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, id] of markdown.matchAll(/<a id="([^"]+)">/g)) anchors.add(id!);
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm))
    anchors.add(
      heading!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  return anchors;
}

test('every relative link of the README and docs/ reaches a file (and its anchor)', () => {
  const broken: string[] = [];
  for (const file of [path.join(REPOSITORY, 'README.md'), ...markdownFiles(path.join(REPOSITORY, 'docs'))]) {
    const text = fs.readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [where, anchor] = target!.split('#');
      const resolved = where ? path.resolve(path.dirname(file), where) : file;
      const name = `${path.relative(REPOSITORY, file)} → ${target}`;
      if (!fs.existsSync(resolved) && !GENERATED.has(resolved)) broken.push(name);
      else if (anchor && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${name} (no such anchor)`);
    }
  }
  assert.deepEqual(broken, []);
});
