/** Boot stages from the console markers of the boot contract, and the console log cap. */
import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { capLogFile, errorLines, readTail, stageFromConsole } from '../../src/vm/qemu/console-log.ts';

describe('console log', () => {
  test('the stage is the last marker seen; before any marker the kernel', () => {
    assert.equal(stageFromConsole('[    0.4] PCI: Fatal\r\n'), 'kernel');
    assert.equal(stageFromConsole('boot\r\nsandboxd-stage: initramfs\r\n'), 'initramfs');
    assert.equal(stageFromConsole('sandboxd-stage: initramfs\nsandboxd-stage: init\n'), 'init');
    assert.equal(stageFromConsole('sandboxd-stage: initramfs\nsandboxd-stage: init\nsandboxd-stage: agent\n'), 'agent');
    // "init" must not be read into "initramfs", nor a marker inside other text.
    assert.equal(stageFromConsole('echo sandboxd-stage: agent\nsandboxd-stage: initramfs\n'), 'initramfs');
  });

  test('initramfs errors are picked out for the failure message', () => {
    assert.deepEqual(errorLines('x\nsandboxd-error: initramfs: no /dev/vda\r\ny\n'), ['sandboxd-error: initramfs: no /dev/vda']);
  });

  test('the cap keeps the newest part of an oversized log; QEMU appends after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandboxd-console-'));
    try {
      const path = join(dir, 'console.log');
      const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`);
      await writeFile(path, `${lines.join('\n')}\n`);
      assert.equal(await capLogFile(path, 1_000_000), false);
      assert.equal(await capLogFile(path, 4000), true);
      const text = await readFile(path, 'utf8');
      assert.ok(text.length < 4000);
      assert.match(text, /^\[sandboxd: console log cut at \d+ bytes/);
      assert.ok(text.includes('line 1999\n'));
      await appendFile(path, 'after\n');
      assert.equal((await readTail(path, 2)).split('\n').at(-1), 'after');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
