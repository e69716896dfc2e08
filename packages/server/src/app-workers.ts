/**
 * What runs beside the HTTP app for as long as it lives: one list of workers (core/worker.ts) in the order they
 * start. `runWorkers` starts them in that order once the app is ready (before it listens), and stops them in
 * reverse, in two passes: first the intake workers (they bring work in), before the server waits for the requests
 * in flight; then the others, once those ended. The order carries these constraints (keep them when adding one):
 *
 * - The store is first, so it closes last: every other stop may still record something.
 * - The cluster storage's loops (cache upkeep, garbage collection) need only the store and the engine's object store.
 * - The internal listener binds before the node registers, so the node's row carries the address it really serves
 *   at; the registration stops last but the store, so the row says `left` only once the node runs nothing.
 * - Egress starts before the engine and stops after the VMs: their rules go with them, or stay and fail closed
 *   until the next start when SANDBOXD_KEEP_VMS_ON_SHUTDOWN keeps them running; with `warmUp` (a server process,
 *   main.ts) the engine re-adopts the VMs a previous process left, in the background, and only then does egress
 *   re-apply their policies and reap the rules of VMs that are gone.
 * - The engine (when the app made it) stops after everything that works on VMs: desktop recordings being saved,
 *   browser pages, template builds and executions settle first; its VMs are killed and recorded ended.
 * - Executions come last of those: at start, the runs a previous process left are recorded failed before the first
 *   request; at a stop, this node's runs are the first thing recorded failed once the requests in flight ended.
 * - The intake workers start once the records are straight: the SSH gateway, the kill queue (after the node
 *   registered), the admin listener, webhook delivery, custom domains (the routing set loaded before the server
 *   serves). They stop before the requests drain, with the store still open for what they settle.
 */
import { startAdminListener } from './api/admin-listener.ts';
import { startInternalListener } from './api/internal-listener.ts';
import type { App } from './api/types.ts';
import type { CheckReport } from './core/custom-domain-checker.ts';
import type { AttemptReport } from './core/webhooks/dispatcher.ts';
import type { Worker } from './core/worker.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Services } from './services.ts';
import type { SshGateway } from './ssh/ssh-gateway.ts';

export interface AppWorkerOptions {
  /** The app's metrics: the admin listener serves them; webhook attempts are counted into them. */
  metrics: Metrics;
  /** The engine when the app made it (it then kills its VMs and closes it); null when the caller owns it. */
  ownEngine: { close?(): Promise<void> } | null;
  /** Whether the app opened the store (it then closes it). */
  ownsDatabase: boolean;
  /** Start the engine and the browser pool in the background once ready (main.ts); otherwise they start on first use. */
  warmUp: boolean;
}

/** Where the cluster's listeners serve, once the app is ready (null when turned off). */
export interface NodeAddresses {
  adminUrl: string | null;
  internalUrl: string | null;
}

const idle = async () => {};

/** The app's workers in start order (see above for why this order), and the addresses its listeners bind. */
export function appWorkers(app: App, services: Services, sshGateway: SshGateway, options: AppWorkerOptions): { workers: Worker[]; addresses: NodeAddresses } {
  const log = app.log;
  const { config, database, webhookDispatcher, customDomainHosts } = services;
  const { executions, vms, templates, browserService, computerUse, egress, vaultGateway, nodes, killQueue, customDomainChecker } = services.sandbox;
  const addresses: NodeAddresses = { adminUrl: null, internalUrl: null };
  let closeInternal = idle;
  let closeAdmin = idle;
  // Every loop of the core reports a failed turn here: logged with its name, counted by it.
  services.backgroundFailures.on((loop, error) => {
    log.error({ err: error, loop }, `background loop ${loop} failed; its next turn retries`);
    options.metrics.recordBackgroundFailure(loop);
  });
  const workers: Worker[] = [
    { name: 'store', start: idle, stop: async () => void (options.ownsDatabase && (await database.close())) },
    {
      name: 'internal listener',
      intake: true,
      start: async () => {
        const listener = await startInternalListener(services, log);
        addresses.internalUrl = listener.url;
        closeInternal = listener.close;
      },
      stop: () => closeInternal(),
    },
    {
      name: 'node registration',
      start: async () => {
        nodes.internalUrl = addresses.internalUrl ?? '';
        await nodes.start();
      },
      stop: () => nodes.stop().catch((error: unknown) => log.error({ err: error }, 'recording this node as left failed; it will be declared dead')),
    },
    // The cluster's object store: this node's cache kept within its limit, garbage collected at its interval.
    { name: 'cluster storage', start: async () => services.sandbox.storage.start(), stop: async () => services.sandbox.storage.stop() },
    {
      name: 'egress',
      start: async () => {
        void egress.start().catch((error: unknown) => log.error({ err: error }, 'egress policies could not be started; restricted policies are refused'));
        vaultGateway.start();
      },
      stop: async () => {
        await egress.stop({ vmsKept: config.vm.keepVmsOnShutdown }).catch((error: unknown) => log.error({ err: error }, 'stopping egress enforcement failed'));
        await vaultGateway.stop();
      },
    },
    {
      name: 'private networks',
      start: async () => {
        void services.sandbox.networks.start().catch((error: unknown) => log.error({ err: error }, 'private networks could not be started'));
      },
      stop: () => services.sandbox.networks.stop().catch((error: unknown) => log.error({ err: error }, 'stopping private networks failed')),
    },
    {
      name: 'VM engine',
      start: async () => {
        vms.startAutoPause(
          { checkMs: config.vm.autoPauseCheckSeconds * 1000, retentionCheckMs: config.vm.pausedRetentionCheckSeconds * 1000 },
          services.backgroundFailures,
        );
        if (!options.warmUp) return;
        // In the background: the first start on a machine builds snapshots (tens of seconds under TCG).
        vms.start().then(
          async ({ adopted, ended }) => {
            log.info({ adopted, ended }, 'VMs reconciled with the store');
            await egress
              .recover()
              .catch((error: unknown) => log.error({ err: error }, 'egress policies of re-adopted VMs could not be re-applied; the reconcile loop retries'));
          },
          (error: unknown) => log.error({ err: error }, 'the VM engine could not start; VM requests answer 503 until it can'),
        );
      },
      stop: async () => {
        await vms.stopAutoPause();
        if (!options.ownEngine) return;
        const killVms = !config.vm.keepVmsOnShutdown;
        if (killVms) await vms.stop();
        await options.ownEngine.close?.();
        if (killVms) await vms.stop();
      },
    },
    { name: 'computer use', start: () => computerUse.recover(log), stop: () => computerUse.settled() },
    {
      // Its pages are this process's connections: the sessions end with it, and their VMs with them.
      name: 'browser',
      start: async () => {
        browserService.begin();
        // Ends browser sessions a previous process left, and fills the browser pool when it has a size.
        if (options.warmUp)
          browserService.start().catch((error: unknown) => log.error({ err: error }, 'the browser service could not start; browser requests retry it'));
      },
      stop: () => browserService.close(),
    },
    {
      name: 'template builds',
      start: async () => {
        const builds = await templates.failInterruptedBuilds();
        if (builds > 0) log.warn({ templates: builds }, 'template builds left running by the previous server process recorded as failed');
      },
      stop: () => templates.stop(),
    },
    {
      name: 'executions',
      start: async () => {
        const ended = await executions.endRunsOfThisNode('restarted');
        if (ended > 0) log.warn({ executions: ended }, 'executions left running by the previous server process recorded as failed');
      },
      stop: async () => void (await executions.endRunsOfThisNode('stopping')),
    },
    // Looks after live apps' replicas (core/apps/supervisor.ts); stops before the VM engine does.
    { name: 'app supervisor', start: async () => services.sandbox.appSupervisor.start(), stop: () => services.sandbox.appSupervisor.stop() },
    { name: 'SSH gateway', intake: true, start: async () => void (await sshGateway.start()), stop: () => sshGateway.close() },
    ...(killQueue ? [{ name: 'kill queue', intake: true, start: () => killQueue.start(), stop: () => killQueue.stop() }] : []),
    {
      name: 'admin listener',
      intake: true,
      start: async () => {
        const listener = await startAdminListener(config.server, nodes, vms, options.metrics, log);
        addresses.adminUrl = listener.url;
        closeAdmin = listener.close;
      },
      stop: () => closeAdmin(),
    },
    {
      // Attempts in flight are handed back to the queue.
      name: 'webhook delivery',
      intake: true,
      start: async () => {
        webhookDispatcher.on('attempt', (report: AttemptReport) => {
          log.debug({ webhook: report }, 'webhook attempt');
          options.metrics.recordWebhookAttempt(report.status);
        });
        webhookDispatcher.on('failure', (error: unknown) => {
          log.error({ err: error, loop: 'webhook_dispatch' }, 'webhook dispatcher pass failed; retrying on the next one');
          options.metrics.recordBackgroundFailure('webhook_dispatch');
        });
        webhookDispatcher.start();
      },
      stop: () => webhookDispatcher.stop(),
    },
    {
      // The routing set is loaded before the server serves (and reloaded for changes made on other nodes); the
      // checker re-checks pending and verified claims.
      name: 'custom domains',
      intake: true,
      start: async () => {
        customDomainHosts.on('failure', (error: unknown) => {
          log.error({ err: error, loop: 'custom_domain_reload' }, 'reloading the verified custom domains failed; the previous set is kept');
          options.metrics.recordBackgroundFailure('custom_domain_reload');
        });
        customDomainChecker.on('check', (report: CheckReport) => log.debug({ customDomain: report }, 'custom domain checked'));
        customDomainChecker.on('failure', (error: unknown) => {
          log.error({ err: error, loop: 'custom_domain_check' }, 'custom domain check pass failed; retrying on the next one');
          options.metrics.recordBackgroundFailure('custom_domain_check');
        });
        await customDomainHosts.start();
        customDomainChecker.start();
      },
      stop: async () => {
        customDomainHosts.stop();
        await customDomainChecker.stop();
      },
    },
  ];
  return { workers, addresses };
}

/**
 * Starts `workers` in order when the app is ready (a failure fails the start); stops them in reverse when it
 * closes: the intake workers before the server waits for the requests in flight, the rest after. A worker whose
 * stop fails is logged and the next one still stops (the next start reconciles what is left).
 */
export function runWorkers(app: App, workers: readonly Worker[]): void {
  app.addHook('onReady', async () => {
    for (const worker of workers) await worker.start();
  });
  const stop = async (intake: boolean) => {
    for (const worker of [...workers].reverse()) {
      if ((worker.intake ?? false) !== intake) continue;
      await worker
        .stop()
        .catch((error: unknown) => app.log.error({ err: error, worker: worker.name }, 'stopping a worker failed; the next start reconciles what is left'));
    }
  };
  app.addHook('preClose', () => stop(true));
  app.addHook('onClose', () => stop(false));
}
