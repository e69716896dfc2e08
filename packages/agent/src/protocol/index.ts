/**
 * The host-guest protocol of sandboxd: one module both the agent and the host client import
 * (`@sandboxd/agent/protocol`). It has no dependencies beyond Node built-ins, so the agent bundle stays small.
 */
export * from './version.ts';
export * from './routes.ts';
export * from './messages.ts';
export * from './errors.ts';
export * from './frames.ts';
export * from './link-sync.ts';
export * from './desktop.ts';
