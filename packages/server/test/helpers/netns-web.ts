// test-lane: heavy (network namespaces, veth pairs and routes on the host): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * A web server in a network namespace of its own, for the browser tests. Their Chromium runs in a QEMU VM whose
 * traffic leaves the host as the VM user through QEMU's user-mode network, and the network guard
 * (`src/vm/qemu/network-guard.ts`) rejects that user's traffic to loopback and to private ranges. Tests may only
 * send traffic to loopback or to namespaces they create, so the pages live in a namespace `sbxw-<pid>-<random>`
 * joined to the host by a veth pair on a /30 of TEST-NET-2 (198.51.100.0/24): not a range the guard blocks, not
 * routed on the internet, and local to this machine.
 *
 * The server is `fixtures/browser-pages.mjs`. `stop()` kills it and deletes the namespace and the veth pair;
 * so does the exit of this process (normal exit, SIGINT, SIGTERM). Namespaces left by a process that was
 * killed outright are removed by the next start in any process. A blackhole route for the whole of
 * 198.51.100.0/24, installed at the first start and left in place, keeps requests to a server that is gone
 * on this machine: without it they would take the default route out. Needs root (the tests run as root).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProgram } from '../../src/host/run-program.ts';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'browser-pages.mjs');
const NAMESPACE_PATTERN = /^sbxw-(\d+)-[0-9a-f]+$/;
const TEST_NET_2 = '198.51.100.0/24';
/** /30 blocks 1-62 of 198.51.100.0/24 (the first and last are left alone: they hold the /24's own edges). */
const FIRST_BLOCK = 1;
const LAST_BLOCK = 62;

/** A page besides the built-in ones: HTML text, or a whole answer. */
export type NetnsPage = string | { status?: number; contentType?: string; headers?: Record<string, string>; body?: string };

/** One request the server saw (not counting the reads of the log itself). */
export interface NetnsRequest {
  method: string;
  /** Path and query, as requested. */
  path: string;
  userAgent: string | null;
  /** ISO time it arrived. */
  at: string;
}

export interface NetnsWebServer {
  /** `http://198.51.100.x` (port 80) or `http://198.51.100.x:PORT`, without a trailing slash. */
  baseUrl: string;
  namespace: string;
  /** The /30, e.g. `198.51.100.8/30`: the host's end has its first address, the server the second. */
  subnet: string;
  hostAddress: string;
  serverAddress: string;
  /** The host's end of the veth pair (`sbxwh<N>`). */
  hostInterface: string;
  /** Everything the server was asked for so far, oldest first. */
  requests(): Promise<NetnsRequest[]>;
  /** Stops the server and deletes the namespace and the veth pair; calling it again does nothing. */
  stop(): Promise<void>;
}

export interface NetnsWebOptions {
  /** The server's TCP port (default 80). */
  port?: number;
  startTimeoutMs?: number;
  /** Also serve the pages over HTTPS with this certificate and key (PEM files), on `tls.port` (default 443). */
  tls?: { certPath: string; keyPath: string; port?: number };
  /** Another fixture server to run instead of browser-pages.mjs, with the same command line (e.g. `fixtures/echo-upstream.mjs`). */
  script?: string;
}

interface Resources {
  namespace: string;
  hostInterface: string | null;
  child: ChildProcessWithoutNullStreams | null;
  pagesFile: string | null;
}

/** What each server still holds, for the clean-up at exit. */
const live = new Set<Resources>();
let exitHooksInstalled = false;

function ip(...args: string[]) {
  return runProgram('ip', args, { timeoutMs: 10_000 });
}

/** Removes what `resources` holds without waiting for anything (also used from the `exit` event). */
function releaseSync(resources: Resources): void {
  resources.child?.kill('SIGKILL');
  if (resources.hostInterface) spawnSync('ip', ['link', 'del', resources.hostInterface], { stdio: 'ignore' });
  spawnSync('ip', ['netns', 'del', resources.namespace], { stdio: 'ignore' });
  if (resources.pagesFile) fs.rmSync(resources.pagesFile, { force: true });
  live.delete(resources);
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.once('exit', () => {
    for (const resources of [...live]) releaseSync(resources);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const resources of [...live]) releaseSync(resources);
      // Die of the signal as the process would have without this listener.
      process.kill(process.pid, signal);
    });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Deletes the namespaces of processes that are gone (killed before they could clean up), and what runs in them. */
async function reapStaleNamespaces(): Promise<void> {
  const { stdout } = await ip('netns', 'list');
  for (const line of stdout.split('\n')) {
    const name = line.trim().split(/\s+/)[0] ?? '';
    const match = NAMESPACE_PATTERN.exec(name);
    if (!match || isAlive(Number(match[1]))) continue;
    const pids = await ip('netns', 'pids', name).catch(() => ({ stdout: '' }));
    for (const pid of pids.stdout.split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await ip('netns', 'del', name).catch(() => undefined);
  }
}

function toNumber(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

/**
 * Ranges [first, last] of every IPv4 address and prefix the host's addresses and routes (all tables) mention,
 * but for the default route and our own blackhole for the whole of TEST-NET-2.
 */
async function usedIpv4Ranges(): Promise<[number, number][]> {
  const outputs = await Promise.all([ip('-4', '-o', 'addr', 'show'), ip('-4', 'route', 'show', 'table', 'all')]);
  const ranges: [number, number][] = [];
  for (const line of outputs.flatMap(({ stdout }) => stdout.split('\n'))) {
    if (line.startsWith(`blackhole ${TEST_NET_2}`)) continue;
    for (const match of line.matchAll(/\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?:\/(\d{1,2}))?\b/g)) {
      const bits = match[2] === undefined ? 32 : Number(match[2]);
      if (bits === 0) continue;
      const size = 2 ** (32 - bits);
      const first = Math.floor(toNumber(match[1]!) / size) * size;
      ranges.push([first, first + size - 1]);
    }
  }
  return ranges;
}

/**
 * Creates the veth pair for one free /30, its far end already in `namespace`. The host end is named after the
 * block (`sbxwh<N>`): interface names are unique, so two processes that chose the same block at once cannot
 * both create it, and the loser tries another.
 */
async function claimBlock(namespace: string, resources: Resources): Promise<{ block: number; hostInterface: string; peerInterface: string }> {
  // From a random block on, so that test files starting together seldom reach for the same one.
  const count = LAST_BLOCK - FIRST_BLOCK + 1;
  const start = Math.floor(Math.random() * count);
  const blocks = Array.from({ length: count }, (_, i) => FIRST_BLOCK + ((start + i) % count));
  const base = toNumber('198.51.100.0');
  let lastError: unknown = null;
  for (const block of blocks) {
    const first = base + block * 4;
    if ((await usedIpv4Ranges()).some(([start, end]) => start <= first + 3 && first <= end)) continue;
    const hostInterface = `sbxwh${block}`;
    const peerInterface = `sbxwn${block}`;
    try {
      await ip('link', 'add', hostInterface, 'type', 'veth', 'peer', 'name', peerInterface, 'netns', namespace);
    } catch (error) {
      lastError = error;
      continue;
    }
    resources.hostInterface = hostInterface;
    return { block, hostInterface, peerInterface };
  }
  throw new Error(`no free /30 in 198.51.100.0/24 for a test web server${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
}

/**
 * Starts the browser test pages (`fixtures/browser-pages.mjs`, plus `pages`, which win over them) in a network
 * namespace of their own, reachable from the host and from the VM user through the network guard.
 */
export async function startNetnsWebServer(pages: Record<string, NetnsPage> = {}, options: NetnsWebOptions = {}): Promise<NetnsWebServer> {
  if (process.getuid?.() !== 0) throw new Error('startNetnsWebServer needs root (network namespaces and veth pairs)');
  const port = options.port ?? 80;
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  installExitHooks();
  await reapStaleNamespaces();

  // Each server's /30 is a connected route, more specific than this one. Without it, a request to the address of
  // a server that has stopped (or never started) would follow the default route off the machine.
  await ip('route', 'replace', 'blackhole', TEST_NET_2);

  const namespace = `sbxw-${process.pid}-${randomBytes(3).toString('hex')}`;
  const resources: Resources = { namespace, hostInterface: null, child: null, pagesFile: null };
  live.add(resources);
  try {
    await ip('netns', 'add', namespace);
    const { block, hostInterface, peerInterface } = await claimBlock(namespace, resources);
    const hostAddress = `198.51.100.${block * 4 + 1}`;
    const serverAddress = `198.51.100.${block * 4 + 2}`;
    await ip('addr', 'add', `${hostAddress}/30`, 'dev', hostInterface);
    await ip('link', 'set', hostInterface, 'up');
    await ip('-n', namespace, 'link', 'set', 'lo', 'up');
    await ip('-n', namespace, 'addr', 'add', `${serverAddress}/30`, 'dev', peerInterface);
    await ip('-n', namespace, 'link', 'set', peerInterface, 'up');

    const args = [options.script ?? FIXTURE, '--host', serverAddress, '--port', String(port), '--exit-with-stdin'];
    if (options.tls) args.push('--tls-cert', options.tls.certPath, '--tls-key', options.tls.keyPath, '--tls-port', String(options.tls.port ?? 443));
    if (Object.keys(pages).length > 0) {
      resources.pagesFile = path.join(os.tmpdir(), `${namespace}-pages.json`);
      fs.writeFileSync(resources.pagesFile, JSON.stringify(pages), { mode: 0o600 });
      args.push('--pages', resources.pagesFile);
    }
    // stdin stays open as long as this process lives: the server stops when it closes, however this one ends.
    const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    resources.child = child;
    await waitForListening(child, startTimeoutMs);

    const baseUrl = port === 80 ? `http://${serverAddress}` : `http://${serverAddress}:${port}`;
    let stopping: Promise<void> | null = null;
    return {
      baseUrl,
      namespace,
      subnet: `198.51.100.${block * 4}/30`,
      hostAddress,
      serverAddress,
      hostInterface,
      requests: async () => {
        if (stopping) throw new Error('the test web server is stopped');
        const response = await fetch(`${baseUrl}/__requests`, { signal: AbortSignal.timeout(5000) });
        if (!response.ok) throw new Error(`${baseUrl}/__requests answered ${response.status}`);
        return (await response.json()) as NetnsRequest[];
      },
      stop: () => (stopping ??= release(resources)),
    };
  } catch (error) {
    releaseSync(resources);
    throw error;
  }
}

async function waitForListening(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<void> {
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => done(new Error(`the test web server exited with ${code}:\n${output}`));
    const timer = setTimeout(() => done(new Error(`the test web server did not listen within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('"listening"')) done();
    });
    child.once('exit', onExit);
  });
}

/** Stops the server (SIGTERM, SIGKILL after 3 s) and deletes the veth pair and the namespace. */
async function release(resources: Resources): Promise<void> {
  const child = resources.child;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
  resources.child = null;
  if (resources.hostInterface) await ip('link', 'del', resources.hostInterface).catch(() => undefined);
  await ip('netns', 'del', resources.namespace);
  if (resources.pagesFile) fs.rmSync(resources.pagesFile, { force: true });
  live.delete(resources);
}
