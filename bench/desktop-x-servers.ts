/**
 * Xvnc or Xvfb + x11vnc for the desktop template (issue 18 asked to measure): a bench-only variant of the
 * desktop image with Debian's `xvfb` and `x11vnc` added (built once, cached by content hash like every image)
 * is cold-booted with the desktop template's shape, and bench/guest/x-servers.mjs measures both set-ups inside
 * it, one after the other, on the same display size. `npm run bench:desktop-x`; ends with one JSON line.
 */
import fs from 'node:fs';
import { loadConfig } from '../packages/server/src/config/index.ts';
import { DESKTOP_DEFAULT_SCREEN } from '../packages/server/src/core/computer-use/desktop.ts';
import { desktopFlavour } from '../packages/server/src/image/flavours.ts';
import { bootColdVm } from './cold-vm.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const log = (message: string) => process.stderr.write(`[bench:desktop-x] ${message}\n`);

async function main(): Promise<void> {
  const config = loadConfig();
  const desktop = await desktopFlavour();
  const flavour = { ...desktop, name: 'desktop-x-servers', packages: [...desktop.packages, 'xvfb', 'x11vnc'] };
  log(
    `cold-booting the desktop image with xvfb and x11vnc added (${config.desktop.desktopVcpus} vCPUs, ${config.desktop.desktopMemoryMb} MiB; the image is built first if it is not cached)`,
  );
  const vm = await bootColdVm(flavour, { vcpuCount: config.desktop.desktopVcpus, memoryMb: config.desktop.desktopMemoryMb }, log);
  try {
    await vm.agent.writeFile('/tmp/x-servers.mjs', fs.readFileSync(new URL('./guest/x-servers.mjs', import.meta.url)));
    const { width, height } = DESKTOP_DEFAULT_SCREEN;
    log(`measuring Xvnc, then Xvfb + x11vnc, at ${width}×${height} (about a minute each under TCG)`);
    const { stdout, stderr } = await vm.run(['node', '/tmp/x-servers.mjs', String(width), String(height), String(ROUNDS)]);
    process.stderr.write(stderr);
    process.stdout.write(stdout);
  } finally {
    await vm.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
