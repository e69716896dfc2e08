/** The one JavaScript context registry of a server (the kernels it started), shared by /execute and /contexts. */
import type { Services } from '../../../services.ts';
import { JsContexts } from './js-contexts.ts';

/** Where JavaScript contexts start unless told otherwise: E2B's user's home. */
export const DEFAULT_JS_CWD = '/home/user';

const registries = new WeakMap<Services, JsContexts>();

export function jsContexts(services: Services): JsContexts {
  let registry = registries.get(services);
  if (!registry) registries.set(services, (registry = new JsContexts(services)));
  return registry;
}
