import type { App, RouteContext } from '../../types.ts';
import { registerVaultRequestLogs } from './request-logs.ts';
import { registerVaultSecrets } from './secrets.ts';
import { registerVaultCrud } from './vaults.ts';

export function registerVaultRoutes(app: App, context: RouteContext): void {
  registerVaultCrud(app, context);
  registerVaultSecrets(app, context);
  registerVaultRequestLogs(app, context);
}
