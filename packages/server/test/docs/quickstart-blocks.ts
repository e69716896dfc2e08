/**
 * The runnable blocks of the quickstarts (docs/quickstart/*.md), by the convention docs/index.md states: a fenced
 * block followed on the next line by `<!-- run -->` is run by the quickstarts test, one followed by
 * `<!-- skip: why -->` is shown only (it installs something, serves, or waits for a person). A block with neither
 * is an error, so a new block cannot go untested without saying so. Reads files only: importing it starts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const QUICKSTART_DIR = path.join(REPOSITORY, 'docs', 'quickstart');
/** The ways in, each with a quickstart. */
export const QUICKSTARTS = ['curl', 'typescript', 'python', 'cli', 'mcp'] as const;

export interface Block {
  /** The fence's info string: `bash`, `js`, `python`, `sh`, `json`… */
  language: string;
  code: string;
  /** `run`, or why it is not run; null when the block is not marked. */
  mark: { run: true } | { run: false; reason: string } | null;
  /** 1-based line of the opening fence. */
  line: number;
}

/** Every fenced block of a markdown text, with its mark. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*\n(?:<!--\s*(run|skip:\s*([^>]*?))\s*-->)?/gm;
  for (let match = fence.exec(markdown); match; match = fence.exec(markdown)) {
    const [, info, code, mark, reason] = match;
    blocks.push({
      language: info!.trim(),
      code: code!,
      mark: mark === 'run' ? { run: true } : mark ? { run: false, reason: reason!.trim() } : null,
      line: markdown.slice(0, match.index).split('\n').length,
    });
  }
  return blocks;
}

/** The blocks of one quickstart. */
export function quickstartBlocks(name: (typeof QUICKSTARTS)[number]): Block[] {
  return blocksOf(fs.readFileSync(path.join(QUICKSTART_DIR, `${name}.md`), 'utf8'));
}

/** The code of a quickstart's runnable blocks of these languages, in order, joined. */
export function runnable(name: (typeof QUICKSTARTS)[number], languages: string[]): string {
  const blocks = quickstartBlocks(name).filter((b) => b.mark?.run);
  const wrong = blocks.filter((b) => !languages.includes(b.language));
  if (wrong.length) throw new Error(`${name}.md: runnable blocks of another language at lines ${wrong.map((b) => b.line).join(', ')}`);
  if (!blocks.length) throw new Error(`${name}.md has no runnable block`);
  return blocks.map((b) => b.code).join('\n');
}
