/** App deployments (issue 38): deploy a folder, its versions and logs, rollback, restart, delete. */
import type { App, RouteContext } from '../../types.ts';
import { registerAppRecords } from './apps.ts';
import { registerDeployApp } from './deploy.ts';
import { registerDeploymentRecords } from './deployments.ts';
import { registerAppLogs } from './logs.ts';
import { registerRollbackAndRestart } from './rollback.ts';

export { APP_DEPLOY_SCHEMAS } from './schemas.ts';

export function registerAppDeployRoutes(app: App, context: RouteContext): void {
  registerDeployApp(app, context);
  registerAppRecords(app, context);
  registerDeploymentRecords(app, context);
  registerAppLogs(app, context);
  registerRollbackAndRestart(app, context);
}
