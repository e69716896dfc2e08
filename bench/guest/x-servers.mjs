/**
 * Runs inside a desktop VM (bench/desktop-x-servers.ts copies it there): the two ways of giving a VM an X
 * display that a VNC viewer can watch, measured the same way on display :1 (port 5901), one after the other:
 *   xvnc  — TigerVNC's Xvnc, X server and VNC server in one process (what the desktop template runs);
 *   xvfb  — Xvfb plus x11vnc, the VNC server a separate X client that reads the framebuffer back.
 * For each: time until the display and the VNC port answer, resident memory and idle CPU of the server
 * processes with a terminal and a window manager on screen, an xwd screenshot, a VNC full frame (raw encoding),
 * and the latency of an incremental update after the root window's colour changes. Prints one JSON line.
 * Node's own modules only: the guest has Node and nothing from the repository.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const WIDTH = Number(process.argv[2] || 1280);
const HEIGHT = Number(process.argv[3] || 800);
const ROUNDS = Number(process.argv[4] || 5);
const DISPLAY = ':1';
const PORT = 5901;
const env = { ...process.env, DISPLAY, HOME: '/root' };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const round = (n) => Math.round(n * 10) / 10;

const VARIANTS = {
  xvnc: [
    [
      'Xvnc',
      [
        DISPLAY,
        '-geometry',
        `${WIDTH}x${HEIGHT}`,
        '-depth',
        '24',
        '-rfbport',
        String(PORT),
        '-localhost',
        '-SecurityTypes',
        'None',
        '-AlwaysShared',
        '-nolisten',
        'tcp',
      ],
    ],
  ],
  xvfb: [
    ['Xvfb', [DISPLAY, '-screen', '0', `${WIDTH}x${HEIGHT}x24`, '-nolisten', 'tcp']],
    // Defaults otherwise (it uses X DAMAGE hints when the server has them, and polls the framebuffer as well).
    ['x11vnc', ['-display', DISPLAY, '-rfbport', String(PORT), '-localhost', '-nopw', '-forever', '-shared', '-quiet', '-noipv6']],
  ],
};

function start(command, args) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', fs.openSync(`/tmp/x-servers-${command}.log`, 'w')], detached: true });
  child.on('error', (error) => process.stderr.write(`${command}: ${error.message}\n`));
  return child;
}

function displayAnswers() {
  try {
    execFileSync('xdotool', ['getdisplaygeometry'], { env, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A minimal RFB 3.8 client: enough for a handshake, raw full frames and update notifications. */
class Rfb {
  constructor(socket) {
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    this.waiter = null;
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      if (this.waiter && this.buffer.length >= this.waiter.bytes) this.waiter.resolve();
    });
  }
  static connect() {
    return new Promise((resolve, reject) => {
      const socket = net.connect(PORT, '127.0.0.1', () => resolve(new Rfb(socket)));
      socket.once('error', reject);
    });
  }
  async read(bytes) {
    if (this.buffer.length < bytes) {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`VNC: ${bytes} bytes not received`)), 60_000);
        this.waiter = { bytes, resolve: () => (clearTimeout(timer), (this.waiter = null), resolve()) };
      });
    }
    const out = this.buffer.subarray(0, bytes);
    this.buffer = this.buffer.subarray(bytes);
    return out;
  }
  async handshake() {
    await this.read(12);
    this.socket.write('RFB 003.008\n');
    const count = (await this.read(1))[0];
    await this.read(count);
    this.socket.write(Buffer.from([1])); // security type None
    await this.read(4); // SecurityResult
    this.socket.write(Buffer.from([1])); // shared
    const init = await this.read(24);
    this.bytesPerPixel = init[4] / 8;
    await this.read(init.readUInt32BE(20)); // desktop name
    const encodings = Buffer.alloc(8);
    encodings.writeUInt8(2, 0);
    encodings.writeUInt16BE(1, 2);
    encodings.writeInt32BE(0, 4); // raw only: the same bytes on the wire for both servers
    this.socket.write(encodings);
  }
  request(incremental) {
    const message = Buffer.alloc(10);
    message.writeUInt8(3, 0);
    message.writeUInt8(incremental ? 1 : 0, 1);
    message.writeUInt16BE(WIDTH, 6);
    message.writeUInt16BE(HEIGHT, 8);
    this.socket.write(message);
  }
  /** Reads server messages until a framebuffer update has been read whole; returns the pixels it covered. */
  async update() {
    for (;;) {
      const type = (await this.read(1))[0];
      if (type === 0) {
        const header = await this.read(3);
        let pixels = 0;
        for (let i = header.readUInt16BE(1); i > 0; i--) {
          const rect = await this.read(12);
          const area = rect.readUInt16BE(4) * rect.readUInt16BE(6);
          if (rect.readInt32BE(8) === 0) await this.read(area * this.bytesPerPixel);
          pixels += area;
        }
        return pixels;
      }
      if (type === 2) continue; // bell
      if (type === 3) {
        const header = await this.read(7);
        await this.read(header.readUInt32BE(3));
        continue;
      }
      throw new Error(`VNC: unexpected server message ${type}`);
    }
  }
  close() {
    this.socket.destroy();
  }
}

async function vncAnswers() {
  try {
    const rfb = await Rfb.connect();
    await rfb.read(12);
    rfb.close();
    return true;
  } catch {
    return false;
  }
}

function processStats(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return { cpuTicks: Number(stat[11]) + Number(stat[12]), rssKb };
}

async function measure(name) {
  const started = performance.now();
  const servers = VARIANTS[name].map(([command, args]) => start(command, args));
  while (!displayAnswers()) await sleep(50);
  const displayMs = performance.now() - started;
  while (!(await vncAnswers())) await sleep(50);
  const vncMs = performance.now() - started;

  // What a desktop session has on screen: a window manager and a terminal.
  execFileSync('xsetroot', ['-solid', '#2f5d8a'], { env });
  const clients = [start('openbox', []), start('xterm', ['-geometry', '100x30+40+40', '-title', 'Terminal'])];
  await sleep(5000);

  // Idle: nobody connected, then one viewer connected and waiting for changes (x11vnc polls while a client is on).
  const ticks = () => servers.reduce((sum, child) => sum + processStats(child.pid).cpuTicks, 0);
  const idleWindowMs = 10_000;
  let before = ticks();
  await sleep(idleWindowMs);
  const idleCpuPercent = ((ticks() - before) / 100 / (idleWindowMs / 1000)) * 100;
  const viewer = await Rfb.connect();
  await viewer.handshake();
  viewer.request(false);
  await viewer.update();
  viewer.request(true);
  before = ticks();
  await sleep(idleWindowMs);
  const watchedCpuPercent = ((ticks() - before) / 100 / (idleWindowMs / 1000)) * 100;
  const rssMb = servers.reduce((sum, child) => sum + processStats(child.pid).rssKb, 0) / 1024;
  viewer.close();

  const xwd = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    execFileSync('sh', ['-c', 'xwd -root -silent > /dev/null'], { env });
    xwd.push(performance.now() - t);
  }

  const fullFrames = [];
  const updates = [];
  for (let i = 0; i < ROUNDS; i++) {
    const rfb = await Rfb.connect();
    await rfb.handshake();
    let t = performance.now();
    rfb.request(false);
    await rfb.update();
    fullFrames.push(performance.now() - t);
    rfb.request(true);
    await sleep(300);
    const colour = `#${(0x203040 + i * 0x101010).toString(16)}`;
    t = performance.now();
    execFileSync('xsetroot', ['-solid', colour], { env });
    await rfb.update();
    updates.push(performance.now() - t);
    rfb.close();
  }

  for (const child of [...clients, ...servers]) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  while (displayAnswers() || (await vncAnswers())) await sleep(100);
  try {
    fs.rmSync('/tmp/.X1-lock', { force: true });
    fs.rmSync('/tmp/.X11-unix/X1', { force: true });
  } catch {
    // the X server removed them itself
  }
  return {
    display_ready_ms: Math.round(displayMs),
    vnc_ready_ms: Math.round(vncMs),
    rss_mb: round(rssMb),
    idle_cpu_percent: round(idleCpuPercent),
    watched_idle_cpu_percent: round(watchedCpuPercent),
    xwd_p50_ms: Math.round(median(xwd)),
    vnc_full_frame_p50_ms: Math.round(median(fullFrames)),
    vnc_update_after_change_p50_ms: Math.round(median(updates)),
  };
}

(async () => {
  const results = { width: WIDTH, height: HEIGHT, rounds: ROUNDS };
  for (const name of ['xvnc', 'xvfb']) {
    results[name] = await measure(name);
    process.stderr.write(`${name}: ${JSON.stringify(results[name])}\n`);
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
  process.exit(0);
})().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
