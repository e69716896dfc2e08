/**
 * The VMs browsers run in: the built-in `browser` template (loaded on first need, retried after a failure), its
 * warm pool, a new VM with its page ready, and the plan's count of browsers in use. That count is the user's
 * active session rows plus the renders in progress on this node (kept in memory: a render leaves no row behind
 * until it ends).
 */
import { AppError } from '../errors.ts';
import type { Principal } from '../authenticator.ts';
import type { PlanLimiter } from '../limits.ts';
import type { TemplateImage, VmEngine } from '../vm-engine.ts';
import { countActiveBrowserSessions } from '../../store/browser-store.ts';
import type { BrowserDriver, BrowserPage, Viewport } from './browser-driver.ts';

export interface BrowserVmOptions {
  vcpuCount: number;
  memoryMb: number;
  /** Browser VMs kept restored and warmed up ahead of need (0: none). */
  poolSize: number;
}

export class BrowserVms {
  private template: Promise<TemplateImage> | undefined;
  private templateError: Error | undefined;
  /** Renders in progress per user (they count against the plan's browser sessions). */
  private readonly rendering = new Map<number, number>();

  constructor(
    private readonly engine: VmEngine,
    private readonly driver: BrowserDriver,
    private readonly limiter: PlanLimiter,
    private readonly loadTemplate: () => Promise<TemplateImage>,
    private readonly options: BrowserVmOptions,
  ) {}

  /** Why no browser can be started now (the template's last failure), or null. */
  unavailableReason(): string | null {
    return this.templateError?.message ?? null;
  }

  /** Keeps the pool of warmed-up browser VMs filled, when it has a size. */
  async fillPool(): Promise<void> {
    if (this.options.poolSize <= 0) return;
    const template = await this.browserTemplate();
    this.engine.keepWarm({
      template,
      vcpuCount: this.options.vcpuCount,
      memoryMb: this.options.memoryMb,
      size: this.options.poolSize,
      warmUp: (agent) => this.driver.warmUp(agent),
    });
  }

  /** Idle browser VMs in the warm pool of this node. */
  async pooledVms(): Promise<number> {
    const counts = this.engine.poolCounts(await this.browserTemplate());
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /** A VM from the browser template with its page ready; the VM is killed when the page cannot be opened. */
  async openPage(vmId: string, lifetimeSeconds: number, viewport: Viewport, userAgent: string | null): Promise<BrowserPage> {
    const template = await this.browserTemplate();
    const vm = await this.engine.acquire({
      vmId,
      source: { kind: 'template', image: template },
      vcpuCount: this.options.vcpuCount,
      memoryMb: this.options.memoryMb,
      lifetimeSeconds,
    });
    try {
      const agent = this.engine.agent(vmId);
      if (!agent) throw new AppError('VM_UNAVAILABLE', `browser VM ${vmId} ended before its browser could be reached`);
      return await this.driver.open(agent, { viewport, userAgent, fresh: !vm.pooled });
    } catch (error) {
      await this.engine.kill(vmId).catch(() => undefined);
      if (error instanceof AppError) throw error;
      throw new AppError('VM_UNAVAILABLE', `the browser in VM ${vmId} could not be reached: ${(error as Error).message}`);
    }
  }

  /**
   * 429 QUOTA_EXCEEDED when the user's open sessions and renders fill the plan's browser sessions. Call it in a
   * transaction that holds the user's lock, and count what it admits before the transaction ends.
   */
  async assertQuota(trx: Parameters<typeof countActiveBrowserSessions>[0], principal: Principal): Promise<void> {
    const limit = this.limiter.limitsOf(principal).maxBrowserSessions;
    const open = (await countActiveBrowserSessions(trx, principal.userId)) + (this.rendering.get(principal.userId) ?? 0);
    if (open >= limit) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `quota exceeded: your plan (${principal.plan}) allows ${limit} browser sessions and renders at once and you have ${open}; close one first`,
      );
    }
  }

  /** A render of the user's began (counted until `renderEnded`). */
  renderStarted(userId: number): void {
    this.rendering.set(userId, (this.rendering.get(userId) ?? 0) + 1);
  }

  renderEnded(userId: number): void {
    this.rendering.set(userId, (this.rendering.get(userId) ?? 1) - 1);
  }

  private browserTemplate(): Promise<TemplateImage> {
    if (!this.template) {
      this.template = this.loadTemplate();
      this.template.then(
        () => (this.templateError = undefined),
        (error: Error) => {
          this.templateError = error;
          this.template = undefined; // the next request tries again
        },
      );
    }
    return this.template.catch((error: Error) => {
      throw new AppError('SERVICE_UNAVAILABLE', `the browser template is not available on this server: ${error.message}`);
    });
  }
}
