import type { App, RouteContext } from '../../types.ts';
import { registerCreateCustomDomain } from './create.ts';
import { registerDeleteCustomDomain } from './delete.ts';
import { registerGetCustomDomain } from './get.ts';
import { registerListCustomDomains } from './list.ts';
import { registerCustomDomainTlsCheck } from './tls-check.ts';
import { registerVerifyCustomDomain } from './verify.ts';

export function registerCustomDomainRoutes(app: App, context: RouteContext): void {
  registerCreateCustomDomain(app, context);
  registerListCustomDomains(app, context);
  registerCustomDomainTlsCheck(app, context);
  registerGetCustomDomain(app, context);
  registerDeleteCustomDomain(app, context);
  registerVerifyCustomDomain(app, context);
}
