/**
 * Desktop benchmark (issue 18), through the HTTP API on a real server and real VMs: the first desktop (its
 * template snapshot made, unless this machine's cache already has it: then it is a restore too), then desktop session ready from
 * a restore (create + first answer of the computer-use API), a screenshot through the proxy (full size and
 * scaled by half), action round trips (click, type), and the first VNC frame after a WebSocket connects; beside
 * them, in the same run, cold desktop boots (the desktop image booted by the QEMU driver without a snapshot,
 * then `start-desktop`: what every desktop session would cost without the template).
 * `npm run bench:desktop` (root, a quiet host); ends with one JSON line.
 */
import WebSocket from 'ws';
import { call, startTestServer } from '../packages/server/test/helpers/test-server.ts';
import type { SandboxEngine } from '../packages/server/src/engine/sandbox-engine.ts';
import { loadConfig } from '../packages/server/src/config/index.ts';
import { DESKTOP_DEFAULT_SCREEN, DESKTOP_PORTS } from '../packages/server/src/core/computer-use/desktop.ts';
import { DESKTOP_START_PATH, desktopFlavour } from '../packages/server/src/image/flavours.ts';
import { bootColdVm } from './cold-vm.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COLD_ROUNDS = Number(process.env.BENCH_COLD_ROUNDS ?? 2);
const log = (message: string) => process.stderr.write(`[bench:desktop] ${message}\n`);
const p50 = (values: number[]) => Math.round(percentile(values, 50));

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

/** Connects to a viewer's WebSocket, speaks RFB 3.8 up to ServerInit, asks for a full frame: ms until it starts arriving. */
async function firstFrame(url: string): Promise<{ connectMs: number; frameMs: number }> {
  const start = performance.now();
  const socket = new WebSocket(url, ['binary']);
  let buffer = Buffer.alloc(0);
  let waiting: { bytes: number; resolve: () => void } | null = null;
  socket.on('message', (data: Buffer) => {
    buffer = Buffer.concat([buffer, data]);
    if (waiting && buffer.length >= waiting.bytes) waiting.resolve();
  });
  const need = (bytes: number) =>
    new Promise<void>((resolve, reject) => {
      if (buffer.length >= bytes) return resolve();
      const timer = setTimeout(() => reject(new Error(`VNC: ${bytes} bytes not received`)), 30_000);
      waiting = { bytes, resolve: () => (clearTimeout(timer), resolve()) };
    });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await need(12);
  socket.send(Buffer.from('RFB 003.008\n'));
  await need(14);
  socket.send(Buffer.from([1]));
  await need(18);
  socket.send(Buffer.from([1]));
  await need(18 + 24);
  const nameLength = buffer.readUInt32BE(18 + 20);
  await need(18 + 24 + nameLength);
  const connectMs = performance.now() - start;
  const width = buffer.readUInt16BE(18);
  const height = buffer.readUInt16BE(20);
  const before = buffer.length;
  const request = Buffer.alloc(10);
  request.writeUInt8(3, 0);
  request.writeUInt16BE(width, 6);
  request.writeUInt16BE(height, 8);
  const asked = performance.now();
  socket.send(request);
  await need(before + 4);
  const frameMs = performance.now() - asked;
  socket.close();
  return { connectMs, frameMs };
}

/** Cold desktop boots, one after the other: the VM's boot until its agent answers, then the desktop's start. */
async function coldDesktops(results: Record<string, number | string>): Promise<void> {
  const config = loadConfig();
  const flavour = await desktopFlavour();
  const { width, height } = DESKTOP_DEFAULT_SCREEN;
  const boots: number[] = [];
  const starts: number[] = [];
  for (let i = 0; i < COLD_ROUNDS; i++) {
    const vm = await bootColdVm(flavour, { vcpuCount: config.desktop.desktopVcpus, memoryMb: config.desktop.desktopMemoryMb }, log);
    try {
      const { ms } = await vm.run([DESKTOP_START_PATH, String(width), String(height), String(DESKTOP_PORTS.api), String(DESKTOP_PORTS.viewer)]);
      boots.push(vm.bootMs);
      starts.push(ms);
      log(`cold round ${i + 1}: VM booted in ${Math.round(vm.bootMs)} ms, desktop up ${Math.round(ms)} ms later`);
    } finally {
      await vm.close();
    }
  }
  results.cold_boot_p50_ms = p50(boots);
  results.cold_desktop_start_p50_ms = p50(starts);
  results.cold_desktop_ready_p50_ms = p50(boots.map((boot, i) => boot + starts[i]!));
}

async function main(): Promise<void> {
  const results: Record<string, number | string> = { rounds: ROUNDS, accel: '' };
  log(`cold desktop boots (${COLD_ROUNDS}), for comparison with the restores below`);
  await coldDesktops(results);
  const server = await startTestServer({ config: { logLevel: 'silent' } });
  (server.services.sandbox.engine as SandboxEngine).events.once('ready', ({ host }) => (results.accel = host.accelerator));
  try {
    const user = await server.createUserWithKey('bench', 'enterprise');
    const as = { apiKey: user.apiKey };
    const desktop = async () => {
      const created = await call(server, 'POST', '/v1/sessions/session', { ...as, json: { template: 'desktop', vm_lifetime_seconds: 1800 } });
      if (created.status !== 200) throw new Error(created.text);
      const id = created.body.session_id as string;
      const health = await call(server, 'GET', `/v1/computeruse/${id}/health`, as);
      if (health.status !== 200) throw new Error(health.text);
      return id;
    };
    const kill = (id: string) => call(server, 'POST', '/kill', { ...as, json: { session_id: id } });

    log('the first desktop: the template snapshot is made (cold boot, desktop start, save)');
    const [coldMs, first] = await timed(desktop);
    results.first_desktop_with_snapshot_ms = Math.round(coldMs);
    log(`first desktop ready after ${Math.round(coldMs)} ms`);
    await kill(first);

    const ready: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [ms, id] = await timed(desktop);
      ready.push(ms);
      log(`restore round ${i + 1}: ready in ${Math.round(ms)} ms`);
      await kill(id);
    }
    results.desktop_ready_restore_p50_ms = p50(ready);

    const id = await desktop();
    const shots: number[] = [];
    const halfShots: number[] = [];
    const clicks: number[] = [];
    const types: number[] = [];
    const shot = async (query: string) => {
      const response = await fetch(`${server.baseUrl}/v1/computeruse/${id}/screenshot${query}`, { headers: { 'x-api-key': user.apiKey } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`screenshot: ${response.status}`);
    };
    for (let i = 0; i < ROUNDS * 2; i++) {
      shots.push((await timed(() => shot('')))[0]);
      halfShots.push((await timed(() => shot('?scale=0.5')))[0]);
      clicks.push(
        (await timed(() => call(server, 'POST', `/v1/computeruse/${id}/action`, { ...as, json: { action: 'left_click', coordinate: [300 + i, 300] } })))[0],
      );
      types.push((await timed(() => call(server, 'POST', `/v1/computeruse/${id}/action`, { ...as, json: { action: 'type', text: 'a' } })))[0]);
    }
    log(`screenshot ${shots.map(Math.round).join(' ')} ms; scaled ${halfShots.map(Math.round).join(' ')} ms`);
    log(`click ${clicks.map(Math.round).join(' ')} ms; type ${types.map(Math.round).join(' ')} ms`);
    results.screenshot_p50_ms = p50(shots);
    results.screenshot_half_p50_ms = p50(halfShots);
    results.click_p50_ms = p50(clicks);
    results.type_char_p50_ms = p50(types);

    const connects: number[] = [];
    const frames: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const viewer = await call(server, 'GET', `/v1/computeruse/${id}/viewer-url`, as);
      const { connectMs, frameMs } = await firstFrame(viewer.body.websocket_url);
      connects.push(connectMs);
      frames.push(frameMs);
      log(`VNC round ${i + 1}: handshake done in ${Math.round(connectMs)} ms, first frame starts ${Math.round(frameMs)} ms after the request`);
    }
    results.vnc_connect_p50_ms = p50(connects);
    results.vnc_first_frame_p50_ms = p50(frames);
    await kill(id);
  } finally {
    await server.close();
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
