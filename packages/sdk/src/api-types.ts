/**
 * Types of the REST API, derived from `generated/openapi.ts` (which is generated from the document the
 * server serves). `Transport.call` is typed by path and method through these, so a request or response
 * that drifts from the server's schema fails the type check.
 */
import type { components, paths } from './generated/openapi.ts';
import type { WithCamelCase } from './camel-case.ts';

export type { components, paths };
export type Schemas = components['schemas'];

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head';

/** Paths that have an operation for `M`. */
export type PathsFor<M extends HttpMethod> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

/** The JSON body of the 200 (or 201, or 202) answer. */
export type JsonResponse<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: { 200: { content: { 'application/json': infer R } } } }
    ? R
    : Operation<P, M> extends { responses: { 201: { content: { 'application/json': infer R } } } }
      ? R
      : Operation<P, M> extends { responses: { 202: { content: { 'application/json': infer R } } } }
        ? R
        : unknown;

/** The JSON request body. */
export type JsonBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type PathParams<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { path: infer X } } ? ([X] extends [undefined] ? never : NonNullable<X>) : never;

export type QueryParams<P extends keyof paths, M extends HttpMethod> = Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

// Friendly names for the records the client returns.
export type SessionInfo = WithCamelCase<Schemas['SessionCreateResponse']>;
export type SessionCreateRequest = Schemas['SessionCreateRequest'];
export type SessionStatus = WithCamelCase<Schemas['SessionStatus']>;
export type SandboxInfo = WithCamelCase<Schemas['SandboxInfo']>;
export type VmRecord = WithCamelCase<Schemas['VmRecord']>;
export type LifecycleHooks = WithCamelCase<Schemas['LifecycleHooks']>;
export type VolumeRecord = WithCamelCase<Schemas['VolumeRecord']>;
export type NetworkRecord = WithCamelCase<Schemas['NetworkRecord']>;
export type NetworkMemberRecord = WithCamelCase<Schemas['NetworkMemberRecord']>;
export type TemplateRecord = WithCamelCase<Schemas['TemplateRecord']>;
export type TemplateCreateRequest = Schemas['TemplateCreateRequest'];
export type TemplateLog = WithCamelCase<Schemas['TemplateLogResponse']>;
export type ExecuteResult = WithCamelCase<Schemas['ExecuteResponse']>;
export type ExecutionRecord = WithCamelCase<Schemas['TaskRecord']>;
export type ApiKeyRecord = WithCamelCase<Schemas['ApiKeyRecord']>;
export type SshKeyRecord = WithCamelCase<Schemas['SshKeyRecord']>;
export type SshGatewayInfo = WithCamelCase<Schemas['SshGatewayInfo']>;
export type AuditEvent = WithCamelCase<Schemas['AuditEvent']>;
export type AuditEventList = WithCamelCase<Schemas['AuditEventList']>;
export type EgressPolicy = WithCamelCase<Schemas['EgressPolicy']>;
export type EgressPolicyInput = Schemas['EgressPolicyInput'];
export type EgressLogEntry = WithCamelCase<Schemas['EgressLogEntry']>;
export type EgressLogList = WithCamelCase<Schemas['EgressLogList']>;
export type Vault = WithCamelCase<Schemas['Vault']>;
export type VaultSecret = WithCamelCase<Schemas['VaultSecret']>;
export type VaultSecretInjection = WithCamelCase<Schemas['VaultSecretInjection']>;
export type VaultRequestLogEntry = WithCamelCase<Schemas['VaultRequestLogEntry']>;
export type VaultRequestLogList = WithCamelCase<Schemas['VaultRequestLogList']>;
export type WebhookEndpoint = WithCamelCase<Schemas['WebhookEndpoint']>;
export type WebhookDelivery = WithCamelCase<Schemas['WebhookDelivery']>;
export type WebhookDeliveryList = WithCamelCase<Schemas['WebhookDeliveryList']>;
export type WebhookSecretRotation = WithCamelCase<Schemas['WebhookSecretRotation']>;
export type CliAuthStartResponse = WithCamelCase<Schemas['CLIAuthStartResponse']>;
export type CliAuthApproveResponse = WithCamelCase<Schemas['CLIAuthApproveResponse']>;
export type CliAuthExchangeResponse = WithCamelCase<Schemas['CLIAuthExchangeResponse']>;
export type KillResult = JsonResponse<'/kill', 'post'>;
export type UploadResult = JsonResponse<'/upload', 'post'>;
export type FileListing = WithCamelCase<Schemas['FileListing']>;
/** What is at a path in a VM: `type` file, directory, symlink or other; `mode` the permission bits; symlinks not followed. */
export type FileEntry = WithCamelCase<Schemas['FileEntry']>;
export type FileWatchEvent = WithCamelCase<Schemas['FileWatchEvent']>;
export type DailyUsageList = WithCamelCase<Schemas['DailyUsageList']>;
export type AdminUserList = WithCamelCase<Schemas['AdminUserList']>;
export type AdminNodeList = WithCamelCase<Schemas['AdminNodeList']>;
export type AdminStorage = WithCamelCase<Schemas['AdminStorage']>;
export type AdminStorageGc = WithCamelCase<Schemas['AdminStorageGc']>;
export type AdminUser = WithCamelCase<Schemas['AdminUser']>;
export type AsyncExecuteResponse = JsonResponse<'/v1/execute_async', 'post'>;
export type SessionUsage = JsonResponse<'/v1/sessions/usage/{session_id}', 'get'>;
export type SessionDetails = JsonResponse<'/v1/sessions/session/{session_id}', 'get'>;
export type AppUrl = JsonResponse<'/v1/sessions/app-url/{session_id}', 'get'>;
export type Share = WithCamelCase<Schemas['Share']>;
export type CustomDomain = WithCamelCase<Schemas['CustomDomain']>;
export type SnapshotRecord = WithCamelCase<Schemas['SnapshotRecord']>;
export type VmPauseResult = JsonResponse<'/v1/vms/{vm_id}/pause', 'post'>;
export type CloneResult = JsonResponse<'/v1/vms/{vm_id}/clone', 'post'>;
export type PtySession = WithCamelCase<Schemas['PtySession']>;
export type PtySessionState = WithCamelCase<Schemas['PtySessionState']>;
export type TokenResponse = JsonResponse<'/v1/auth/token', 'post'>;
export type WebhookDeliveryDetails = JsonResponse<'/v1/webhooks/deliveries/{delivery_id}', 'get'>;
export type WebhookVerification = JsonResponse<'/v1/webhooks/endpoints/{endpoint_id}/verify', 'post'>;
export type WebhookEndpointInput = JsonBody<'/v1/webhooks/endpoints', 'post'>;
export type WebhookEndpointChanges = JsonBody<'/v1/webhooks/endpoints/{endpoint_id}', 'patch'>;
export type BrowserSessionInfo = WithCamelCase<Schemas['BrowserSessionResponse']>;
export type BrowserSessionClosed = WithCamelCase<Schemas['BrowserSessionCloseResponse']>;
export type BrowserInteractionResult = WithCamelCase<Schemas['BrowserInteractionResponse']>;
export type BrowserScreenshotResult = WithCamelCase<Schemas['BrowserScreenshotResponse']>;
export type BrowserExtractResult = WithCamelCase<Schemas['BrowserExtractResponse']>;
export type BrowserContentResult = WithCamelCase<Schemas['BrowserContentResponse']>;
export type BrowserRenderResult = WithCamelCase<Schemas['BrowserRenderResponse']>;
/** One action of a render as the server reads it: `type` (the interaction's name) and that interaction's fields, defaults filled in. */
export type BrowserRenderAction = WithCamelCase<Schemas['BrowserRenderAction']>;
/**
 * One action of a render as sent: `type` and that interaction's fields (snake_case), each field checked by its
 * name and type; what is left out gets the server's default (a required field left out is the server's 422).
 */
export type BrowserRenderActionInput = BrowserRenderAction extends infer A
  ? A extends { type: string }
    ? Pick<A, 'type'> & Partial<Omit<A, 'type'>>
    : never
  : never;
export type BrowserCapabilities = WithCamelCase<Schemas['BrowserCapabilities']>;
export type BrowserUsageSummary = WithCamelCase<Schemas['BrowserUsageSummary']>;
export type BrowserUsageHistory = WithCamelCase<Schemas['BrowserUsageHistory']>;
export type BrowserUsageRecord = WithCamelCase<Schemas['BrowserUsageRecord']>;
export type BrowserStoredScreenshot = WithCamelCase<Schemas['BrowserStoredScreenshot']>;
export type BrowserAuthTestResult = WithCamelCase<Schemas['BrowserAuthTestResponse']>;
export type BrowserCredential = WithCamelCase<Schemas['BrowserCredentialRecord']>;
/** An app: a folder deployed as a service at its own URL (`client.apps`). */
export type AppRecord = WithCamelCase<Schemas['AppRecord']>;
/** One version of an app: its manifest, its VMs, how its deployment went. */
export type AppDeploymentRecord = WithCamelCase<Schemas['DeploymentRecord']>;
/** What a deploy, a rollback or a restart answers: the app and the deployment under way. */
export type AppDeploymentAccepted = WithCamelCase<Schemas['AppDeploymentAccepted']>;
