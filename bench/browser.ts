/**
 * Browser benchmark (issue 17), through the browser service (no HTTP) on real VMs and a page server in a network
 * namespace: browser session create from the warm pool and from a restore (empty pool), navigate + screenshot of a
 * local page, a one-shot render, each beside a cold Chromium start in a fresh VM measured in the same run (a second
 * Chromium started in a VM restored from the browser template: from exec to its DevTools endpoint answering, then
 * its first page load). `npm run bench:browser` (root, a quiet host); ends with one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../packages/server/src/app.ts';
import { loadConfig } from '../packages/server/src/config/index.ts';
import type { Principal } from '../packages/server/src/core/authenticator.ts';
import type { GuestAgent } from '../packages/server/src/core/vm-engine.ts';
import type { SandboxEngine } from '../packages/server/src/engine/sandbox-engine.ts';
import { startNetnsWebServer } from '../packages/server/test/helpers/netns-web.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const log = (message: string) => process.stderr.write(`[bench:browser] ${message}\n`);
const p50 = (values: number[]) => Math.round(percentile(values, 50));

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

async function shell(agent: GuestAgent, command: string): Promise<string> {
  let out = '';
  const result = await agent.exec({ argv: ['/bin/bash', '-c', command], timeoutMs: 300_000 }, { onStdout: (c) => (out += c), onStderr: (c) => (out += c) });
  if (result.exitCode !== 0) throw new Error(`${command}: exit ${result.exitCode}: ${out}`);
  return out;
}

async function main(): Promise<void> {
  const web = await startNetnsWebServer();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-browser-'));
  const config = loadConfig(process.env, { dataDir, logLevel: 'silent', poolSize: 0, warmVcpus: [1], browserPoolSize: 1 });
  const { app, services } = await buildApp({ config, logger: false });
  const browser = services.sandbox.browserService;
  const engine = services.sandbox.engine;
  const user = await services.users.create({ username: 'bench', password: 'bench-password-long', plan: 'enterprise' });
  const principal: Principal = { userId: user.id, username: 'bench', plan: 'enterprise', isAdmin: false, via: 'api_key', apiKeyId: null };
  const results: Record<string, number | string> = { rounds: ROUNDS, accel: '' };
  (engine as SandboxEngine).events.once('ready', ({ host }) => (results.accel = host.accelerator));
  try {
    // The template's snapshot and the pool's first VM (not measured: once per machine, and the pool's refill).
    log('preparing: browser template snapshot and the warm pool');
    await browser.start();
    const poolReady = async () => {
      const deadline = Date.now() + 600_000;
      while ((await browser.pooledVms()) < 1) {
        if (Date.now() > deadline) throw new Error('the browser pool did not fill within 10 minutes');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };

    const fromPool: number[] = [];
    const navigateShot: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await poolReady();
      const [ms, session] = await timed(() => browser.createSession(principal, { viewport_width: 1280, viewport_height: 720 }));
      fromPool.push(ms);
      const [nav] = await timed(async () => {
        await browser.navigate(principal, { session_id: session.session_id, url: `${web.baseUrl}/page/${i + 1}` });
        await browser.screenshot(principal, { session_id: session.session_id });
      });
      navigateShot.push(nav);
      // A second page in the same session: what an agent's next step costs.
      const [again] = await timed(async () => {
        await browser.navigate(principal, { session_id: session.session_id, url: `${web.baseUrl}/links` });
        await browser.screenshot(principal, { session_id: session.session_id });
      });
      navigateShot.push(again);
      await browser.closeSession(principal, session.session_id);
      log(`pool round ${i + 1}: create ${Math.round(ms)} ms, navigate+screenshot ${Math.round(nav)} / ${Math.round(again)} ms`);
    }
    results.session_from_pool_p50_ms = p50(fromPool);
    results.navigate_screenshot_p50_ms = p50(navigateShot);

    // Renders and restores with the pool kept empty: take its VM first, then measure.
    await poolReady();
    const holder = await browser.createSession(principal, {});
    const fromRestore: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [ms, session] = await timed(() => browser.createSession(principal, {}));
      fromRestore.push(ms);
      await browser.closeSession(principal, session.session_id);
      log(`restore round ${i + 1}: create ${Math.round(ms)} ms`);
    }
    results.session_from_restore_p50_ms = p50(fromRestore);
    const renders: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [ms] = await timed(() => browser.render(principal, { url: `${web.baseUrl}/page/${i + 1}` }));
      renders.push(ms);
      log(`render ${i + 1}: ${Math.round(ms)} ms`);
    }
    results.render_p50_ms = p50(renders);
    await browser.closeSession(principal, holder.session_id);

    // The yardstick: a cold Chromium in a fresh VM (a second one, with its own profile, in a restored browser VM).
    const colds: number[] = [];
    const coldPages: number[] = [];
    for (let i = 0; i < Math.min(ROUNDS, 3); i++) {
      const session = await browser.createSession(principal, {});
      const vmId = (await import('../packages/server/src/store/browser-store.ts').then((m) => m.findBrowserSession(services.database.db, session.session_id)))!
        .vm_id;
      const agent = engine.agent(vmId)!;
      const out = await shell(
        agent,
        `d=$(mktemp -d /run/cold-XXXX); chown 65534:65534 $d; s=$(date +%s%N);
         setsid setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$d /usr/lib/chromium/chromium --headless --disable-gpu --no-first-run --user-data-dir=$d/p --remote-debugging-address=127.0.0.1 --remote-debugging-port=9333 about:blank >/dev/null 2>&1 &
         until curl -fs -o /dev/null http://127.0.0.1:9333/json/version; do sleep 0.1; done; r=$(date +%s%N);
         curl -fs -X PUT "http://127.0.0.1:9333/json/new?${web.baseUrl}/page/1" >/dev/null;
         until curl -fs http://127.0.0.1:9333/json/list | grep -q '"title": "Page 1"'; do sleep 0.1; done; e=$(date +%s%N);
         echo $(( (r - s) / 1000000 )) $(( (e - r) / 1000000 ))`,
      );
      const [ready, page] = out.trim().split(/\s+/).map(Number) as [number, number];
      colds.push(ready);
      coldPages.push(page);
      await browser.closeSession(principal, session.session_id);
      log(`cold Chromium ${i + 1}: DevTools up after ${ready} ms, first page loaded ${page} ms later`);
    }
    results.cold_chromium_start_p50_ms = p50(colds);
    results.cold_chromium_first_page_p50_ms = p50(coldPages);
  } finally {
    await app.close();
    await web.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
