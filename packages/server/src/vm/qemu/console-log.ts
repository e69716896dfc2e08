/**
 * The serial console log: boot stage markers (boot contract, packages/server/images/README.md), its tail for
 * error messages, and a size cap so that a guest printing forever cannot fill the host's disk.
 */
import { open, readFile, stat, truncate, appendFile } from 'node:fs/promises';
import type { VmStage } from '../vm-driver.ts';

/** Console markers in boot order, and the stage a VM is in once the marker appeared. */
const MARKERS: readonly { line: string; stage: VmStage }[] = [
  { line: 'sandboxd-stage: initramfs', stage: 'initramfs' },
  { line: 'sandboxd-stage: init', stage: 'init' },
  { line: 'sandboxd-stage: agent', stage: 'agent' },
];

/** The boot stage shown by console text: the stage of the last marker, `kernel` before any. */
export function stageFromConsole(text: string): VmStage {
  let stage: VmStage = 'kernel';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // "sandboxd-stage: init" must not match "sandboxd-stage: initramfs": whole line or a space after.
    const marker = MARKERS.find((candidate) => line === candidate.line || line.startsWith(`${candidate.line} `));
    if (marker && stageRank(marker.stage) > stageRank(stage)) stage = marker.stage;
  }
  return stage;
}

/** `sandboxd-error:` lines the guest printed (why the initramfs gave up), newest last. */
export function errorLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('sandboxd-error:'));
}

/** The last `maxLines` lines of a text file (reads at most `maxBytes` from its end); '' if unreadable. */
export async function readTail(path: string, maxLines = 40, maxBytes = 16 * 1024): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').split('\n');
    if (size > length) lines.shift(); // a partial first line
    while (lines.length && lines.at(-1) === '') lines.pop();
    return lines.slice(-maxLines).join('\n');
  } catch {
    return '';
  } finally {
    await handle?.close();
  }
}

/** Reads a whole (small) log; '' if missing. */
export async function readLog(path: string): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}

/**
 * Keeps `path` under `maxBytes`: when it is larger, keeps its last quarter after a note. QEMU opened the log
 * with O_APPEND, so it goes on writing at the new end; a line written during the cut may be lost.
 */
export async function capLogFile(path: string, maxBytes: number): Promise<boolean> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (size <= maxBytes) return false;
  const keep = await readTail(path, Number.MAX_SAFE_INTEGER, Math.floor(maxBytes / 4));
  await truncate(path, 0);
  await appendFile(path, `[sandboxd: console log cut at ${size} bytes; earlier output dropped]\n${keep}\n`);
  return true;
}

/** Follows a console log while a VM boots and reports each new stage once. */
export class ConsoleStageWatcher {
  private offset = 0;
  private text = '';
  private stage: VmStage = 'kernel';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly onStage: (stage: VmStage) => void,
    private readonly intervalMs = 50,
  ) {}

  start(): void {
    const tick = async () => {
      await this.poll();
      if (this.timer) this.timer = setTimeout(tick, this.intervalMs);
    };
    this.timer = setTimeout(tick, this.intervalMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The stage the console shows so far (after one more read). */
  async currentStage(): Promise<VmStage> {
    await this.poll();
    return this.stage;
  }

  private async poll(): Promise<void> {
    let handle;
    try {
      handle = await open(this.path, 'r');
      const { size } = await handle.stat();
      if (size < this.offset) this.offset = 0; // cut by capLogFile
      if (size === this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      await handle.read(buffer, 0, buffer.length, this.offset);
      this.offset = size;
      // Only whole lines matter for markers; keep the text bounded.
      this.text = (this.text + buffer.toString('utf8')).slice(-64 * 1024);
      const stage = stageFromConsole(this.text);
      if (stage !== this.stage && stageRank(stage) > stageRank(this.stage)) {
        this.stage = stage;
        this.onStage(stage);
      }
    } catch {
      // not created yet
    } finally {
      await handle?.close();
    }
  }
}

function stageRank(stage: VmStage): number {
  return stage === 'kernel' ? 0 : MARKERS.findIndex((m) => m.stage === stage) + 1;
}
