/**
 * Readiness of this node (`GET /readyz`): ready to take traffic when its store answers a trivial query AND the
 * built-in template is warm here (the snapshots a first VM restores from are made). The warm pool's fill is not
 * part of it: load drains the pool, and readiness that followed it would flap exactly when the node is busiest.
 */
import type { DefaultTemplateState, VmEngine } from './vm-engine.ts';

export interface ReadinessChecks {
  store: 'ok' | 'unreachable';
  default_template: DefaultTemplateState;
}

export interface Readiness {
  ready: boolean;
  /** `starting`: nothing is wrong yet, the template is still being prepared (or was never asked for: `idle`). */
  status: 'ready' | 'starting' | 'unavailable';
  checks: ReadinessChecks;
  /** Why the store check failed, for the log (never for the client). */
  storeError: unknown;
}

export async function checkReadiness(store: { ping(): Promise<void> }, engine: Pick<VmEngine, 'defaultTemplateState'>): Promise<Readiness> {
  let storeError: unknown = null;
  await store.ping().catch((error: unknown) => (storeError = error ?? new Error('the store did not answer')));
  const checks: ReadinessChecks = { store: storeError ? 'unreachable' : 'ok', default_template: engine.defaultTemplateState() };
  const ready = checks.store === 'ok' && checks.default_template === 'ready';
  const status = ready ? 'ready' : checks.store === 'ok' && checks.default_template !== 'failed' ? 'starting' : 'unavailable';
  return { ready, status, checks, storeError };
}
