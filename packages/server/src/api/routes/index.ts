/**
 * The API's areas, in the order the app registers them: the order of the OpenAPI document's paths, and of its
 * named schemas (components) after the shared ones. Each area brings its routes and the named schemas its routes
 * refer to by `$ref`; `app.ts` registers every area's schemas first (a route may refer to another area's), then
 * every area's routes. A new area is one entry here.
 */
import type { TSchema } from 'typebox';
import { BROWSER_SCHEMAS } from '../../contract/browser/index.ts';
import { registerPreviewRoutes } from '../preview/proxy-routes.ts';
import type { App, RouteContext } from '../types.ts';
import { ADMIN_SCHEMAS, registerAdminRoutes } from './admin/index.ts';
import { registerApiKeyRoutes } from './api-keys/index.ts';
import { ApiKeyBody, ApiKeyCreateBody, ApiKeyRecord } from './api-keys/schemas.ts';
import { registerAppRoutes } from './apps/index.ts';
import { APP_SCHEMAS } from './apps/schemas.ts';
import { APP_DEPLOY_SCHEMAS, registerAppDeployRoutes } from './apps-deploy/index.ts';
import { registerAuditRoutes } from './audit/index.ts';
import { AUDIT_SCHEMAS } from './audit/schemas.ts';
import { registerSessionSignInRoutes } from './auth/session.ts';
import { registerTokenRoute } from './auth/token.ts';
import { registerBrowserRoutes } from './browser/index.ts';
import { registerCliAuthRoutes } from './cli-auth/index.ts';
import { CLI_AUTH_SCHEMAS } from './cli-auth/schemas.ts';
import { COMPUTER_USE_SCHEMAS, registerComputerUseRoutes } from './computer-use/index.ts';
import { registerCustomDomainRoutes } from './custom-domains/index.ts';
import { CUSTOM_DOMAIN_SCHEMAS } from './custom-domains/schemas.ts';
import { registerEgressRoutes } from './egress/index.ts';
import { EGRESS_SCHEMAS } from './egress/schemas.ts';
import { registerEventRoutes } from './events/index.ts';
import { registerExecutionRoutes } from './execution/index.ts';
import { EXECUTION_SCHEMAS } from './execution/schemas.ts';
import { registerFileRoutes } from './files/index.ts';
import { FileEntry, FileListing } from './files/list.ts';
import { FileWatchEvent } from './files/watch.ts';
import { registerHealthRoutes } from './health.ts';
import { registerMcpRoutes } from './mcp/index.ts';
import { registerProcessRoutes } from './processes/index.ts';
import { registerContextRoutes } from './contexts/index.ts';
import { CONTEXT_SCHEMAS } from './contexts/schemas.ts';
import { PROCESS_SCHEMAS } from './processes/schemas.ts';
import { registerPtyRoutes } from './pty/routes.ts';
import { PTY_SCHEMAS } from './pty/schemas.ts';
import { registerSessionRoutes } from './sessions/index.ts';
import { SESSION_SCHEMAS } from './sessions/schemas.ts';
import { registerSnapshotRoutes } from './snapshots/index.ts';
import { SNAPSHOT_SCHEMAS } from './snapshots/schemas.ts';
import { registerSshKeyRoutes } from './ssh-keys/index.ts';
import { SSH_KEY_SCHEMAS } from './ssh-keys/schemas.ts';
import { registerTemplateRoutes } from './templates/index.ts';
import { TEMPLATE_SCHEMAS } from './templates/schemas.ts';
import { DailyUsageList, registerDailyUsage } from './usage/daily.ts';
import { registerVaultRoutes } from './vaults/index.ts';
import { VAULT_SCHEMAS } from './vaults/schemas.ts';
import { registerVmRoutes } from './vms/index.ts';
import { registerVolumeRoutes } from './volumes/index.ts';
import { registerNetworkRoutes } from './networks/index.ts';
import { NETWORK_SCHEMAS } from './networks/schemas.ts';
import { VOLUME_SCHEMAS } from './volumes/schemas.ts';
import { registerWebhookRoutes } from './webhooks/index.ts';
import { WEBHOOK_SCHEMAS } from './webhooks/schemas.ts';
import { registerPublicWorkerRoutes } from './workers/public-routes.ts';
import { DeploymentDrainRequest } from './workers/schemas.ts';

/** One area of the API: its routes, and the named schemas (OpenAPI components) they refer to. */
export interface ApiArea {
  /** For messages and the reader (the routes' folder under api/routes, mostly). */
  name: string;
  schemas: TSchema[];
  register(app: App, context: RouteContext): void;
}

export const API_AREAS: readonly ApiArea[] = [
  { name: 'health', schemas: [], register: registerHealthRoutes },
  { name: 'auth/token', schemas: [], register: registerTokenRoute },
  { name: 'auth/session', schemas: [], register: registerSessionSignInRoutes },
  { name: 'api-keys', schemas: [ApiKeyRecord, ApiKeyBody, ApiKeyCreateBody], register: registerApiKeyRoutes },
  { name: 'webhooks', schemas: WEBHOOK_SCHEMAS, register: registerWebhookRoutes },
  { name: 'audit', schemas: AUDIT_SCHEMAS, register: registerAuditRoutes },
  { name: 'events', schemas: [], register: registerEventRoutes },
  { name: 'sessions', schemas: SESSION_SCHEMAS, register: registerSessionRoutes },
  { name: 'vms', schemas: [], register: registerVmRoutes },
  { name: 'egress', schemas: EGRESS_SCHEMAS, register: registerEgressRoutes },
  { name: 'vaults', schemas: VAULT_SCHEMAS, register: registerVaultRoutes },
  { name: 'snapshots', schemas: SNAPSHOT_SCHEMAS, register: registerSnapshotRoutes },
  { name: 'volumes', schemas: VOLUME_SCHEMAS, register: registerVolumeRoutes },
  { name: 'networks', schemas: NETWORK_SCHEMAS, register: registerNetworkRoutes },
  { name: 'templates', schemas: TEMPLATE_SCHEMAS, register: registerTemplateRoutes },
  { name: 'execution', schemas: EXECUTION_SCHEMAS, register: registerExecutionRoutes },
  { name: 'files', schemas: [FileEntry, FileListing, FileWatchEvent], register: registerFileRoutes },
  { name: 'processes', schemas: PROCESS_SCHEMAS, register: registerProcessRoutes },
  { name: 'contexts', schemas: CONTEXT_SCHEMAS, register: registerContextRoutes },
  { name: 'usage', schemas: [DailyUsageList], register: registerDailyUsage },
  { name: 'admin', schemas: ADMIN_SCHEMAS, register: registerAdminRoutes },
  { name: 'cli-auth', schemas: CLI_AUTH_SCHEMAS, register: registerCliAuthRoutes },
  { name: 'apps', schemas: APP_SCHEMAS, register: registerAppRoutes },
  { name: 'apps-deploy', schemas: APP_DEPLOY_SCHEMAS, register: registerAppDeployRoutes },
  { name: 'previews', schemas: [], register: registerPreviewRoutes },
  { name: 'pty', schemas: PTY_SCHEMAS, register: registerPtyRoutes },
  { name: 'custom-domains', schemas: CUSTOM_DOMAIN_SCHEMAS, register: registerCustomDomainRoutes },
  { name: 'browser', schemas: BROWSER_SCHEMAS, register: registerBrowserRoutes },
  { name: 'computer-use', schemas: COMPUTER_USE_SCHEMAS, register: registerComputerUseRoutes },
  { name: 'mcp', schemas: [], register: registerMcpRoutes },
  { name: 'ssh-keys', schemas: SSH_KEY_SCHEMAS, register: registerSshKeyRoutes },
  { name: 'workers', schemas: [DeploymentDrainRequest], register: registerPublicWorkerRoutes },
];
