/**
 * Which `Host` names are verified custom domains, answered synchronously: Fastify's `rewriteUrl` (which
 * picks the route before any handler runs) and the upgrade router's `claim` cannot wait for the store.
 *
 * This is a routing hint, not the authority. A name in the set sends the request to the custom-domain route,
 * which re-reads the verified claim from the store and answers 404 when it is gone, so a deletion on any
 * node stops the domain at once everywhere. A name missing from the set leaves the request to the API as
 * today. The node that verifies or deletes a claim updates its set at once; the other nodes of a cluster
 * reload the set from the store every `refreshMs`, so a domain verified elsewhere starts being served here
 * within that time. Keeping only names that passed verification means a pending claim (which anyone can
 * make for any name) can never take a host name away from the API.
 */
import { EventEmitter } from 'node:events';
import { domainProblem, type ReservedNames } from './custom-domain-names.ts';
import type { Database } from '../store/database.ts';
import { listVerifiedDomainNames } from '../store/custom-domains-store.ts';

/** Emits 'failure' (Error) when a reload fails; the previous set is kept until the next one works. */
export class CustomDomainHosts extends EventEmitter {
  private names = new Set<string>();
  /** Local changes made while a reload is reading the store, applied over what it read. */
  private changesDuringReload: Map<string, boolean> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly database: Database,
    private readonly refreshMs: number,
    /**
     * Names that are never routed as custom domains, whatever the store holds: the API's own host and the
     * app domain, even when a claim of one was verified before the configuration changed to it.
     */
    private readonly reserved: ReservedNames,
  ) {
    super();
  }

  /** Whether the (normalized) host name is, as far as this node knows, a verified custom domain. */
  has(hostname: string): boolean {
    return this.names.has(hostname);
  }

  add(domain: string): void {
    if (domainProblem(domain, this.reserved) !== null) return;
    this.names.add(domain);
    this.changesDuringReload?.set(domain, true);
  }

  remove(domain: string): void {
    this.names.delete(domain);
    this.changesDuringReload?.set(domain, false);
  }

  /** Replaces the set with the store's verified domains. */
  async reload(): Promise<void> {
    const changes = new Map<string, boolean>();
    this.changesDuringReload = changes;
    try {
      const names = new Set((await listVerifiedDomainNames(this.database.db)).filter((name) => domainProblem(name, this.reserved) === null));
      for (const [name, present] of changes) {
        if (present && domainProblem(name, this.reserved) === null) names.add(name);
        else names.delete(name);
      }
      this.names = names;
    } finally {
      if (this.changesDuringReload === changes) this.changesDuringReload = null;
    }
  }

  /** Loads the set, then reloads it every `refreshMs` until `stop()`. */
  async start(): Promise<void> {
    await this.reload();
    this.arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.reload()
        .catch((error: unknown) => this.emit('failure', error))
        .finally(() => {
          if (this.timer) this.arm();
        });
    }, this.refreshMs);
    this.timer.unref();
  }
}
