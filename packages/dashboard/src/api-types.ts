/**
 * The API's shapes, named as the console uses them: from the same generated OpenAPI types as the client library.
 * No DOM here, so that code without a browser (the console's unit tests) can use them.
 */
import type { components, paths } from '../../sdk/src/generated/openapi.ts';

export type { paths };

export type Schemas = components['schemas'];
export type SandboxInfo = Schemas['SandboxInfo'];
export type ExecuteResponse = Schemas['ExecuteResponse'];
export type TaskRecord = Schemas['TaskRecord'];
export type ApiKeyRecord = Schemas['ApiKeyRecord'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type AuditEvent = Schemas['AuditEvent'];
export type SessionStatus = Schemas['SessionStatus'];
export type PtySession = Schemas['PtySession'];
export type AppUrlResponse = Schemas['AppUrlResponse'];
export type ProcessInfo = Schemas['ProcessInfo'];
export type ProcessEvent = Schemas['ProcessEvent'];
export type RichResult = Schemas['RichResult'];
export type FileEntry = Schemas['FileEntry'];
export type FileListing = Schemas['FileListing'];
export type AppRecord = Schemas['AppRecord'];
export type AppDeploymentRecord = Schemas['DeploymentRecord'];
