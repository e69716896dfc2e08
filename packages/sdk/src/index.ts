/**
 * @sandboxd/sdk: the client library of sandboxd.
 *
 *   const client = new Sandboxd({ apiKey, baseUrl });
 *   const session = await client.sessions.create({ vcpuCount: 2 });
 *   const result = await session.execute('print(1)');
 */
export { Sandboxd, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, type SandboxdOptions } from './client.ts';
export { Session } from './session.ts';
export type { CallOptions } from './call-options.ts';
export { AsyncExecution, recordAsResult, type RunResult, type WaitOptions } from './resources/executions.ts';
export { DEFAULT_EXECUTE_TIMEOUT_SECONDS, type ExecuteOptions, type Language } from './resources/execution.ts';
export type { FileToWrite, MkdirOptions, RemoveOptions, RenameOptions, UploadData, UploadOptions } from './resources/files.ts';
export { MAX_OUTPUT_RESUMES, PROCESS_SIGNALS, Processes, SessionProcesses } from './resources/processes.ts';
export { CommandHandle, SessionCommands, type CommandConnectOptions, type CommandResult, type CommandStartOptions } from './resources/commands.ts';
export { Contexts } from './resources/contexts.ts';
export type { ContextCreateOptions, ContextInfo } from './resources/contexts.ts';
export type { ProcessEvent, ProcessInfo, ProcessRunOptions, ProcessRunResult, ProcessSignal, ProcessStartOptions } from './resources/processes.ts';
export type { SessionCreateOptions } from './resources/sessions.ts';
export type { LifecycleHooksOptions, VmCreateOptions, VmVolumeMount } from './resources/vms.ts';
export { egressPolicyBody, type EgressLogOptions, type EgressPolicyOptions } from './resources/egress.ts';
export type { VolumeCreateOptions } from './resources/volumes.ts';
export { Networks } from './resources/networks.ts';
export { Apps, type AppDeployOptions, type AppLogOptions, type AppSource, type AppWaitOptions } from './resources/apps.ts';
export {
  ALWAYS_IGNORED,
  APP_IGNORE_FILE,
  APP_MANIFEST_FILES,
  appIgnoreMatcher,
  appNameOfFolder,
  listAppFolder,
  manifestName,
  packAppFolder,
} from './app-folder.ts';
export type { TemplateCreateOptions, TemplateWaitOptions } from './resources/templates.ts';
export {
  Browser,
  BrowserSession,
  BrowserCredentials,
  decodeBase64,
  screenshotBytes,
  type BrowserCredentialChanges,
  type BrowserCredentialCreateOptions,
  type BrowserImage,
  type BrowserRenderOptions,
  type BrowserSessionCreateOptions,
  type ClickOptions,
  type Clip,
  type ContentOptions,
  type ElementOptions,
  type ExtractOptions,
  type FillCredentialOptions,
  type KeypressOptions,
  type NavigateOptions,
  type ScreenshotFormat,
  type ScreenshotOptions,
  type ScrollTarget,
  type TypeOptions,
  type WaitCondition,
  type BrowserWaitOptions,
  type WaitUntil,
} from './resources/browser.ts';
export {
  COMPUTER_ACTIONS,
  ComputerUse,
  Desktop,
  type ComputerAction,
  type ComputerActionResult,
  type DesktopCreateOptions,
  type DesktopWindow,
  type SavedRecording,
  type ScreenshotOptions as DesktopScreenshotOptions,
  type ViewerUrl,
  type VmRecording,
} from './resources/computer-use.ts';
export type { ShareCreateOptions } from './resources/shares.ts';
export type { CustomDomainCreateOptions } from './resources/custom-domains.ts';
export {
  TerminalConnection,
  type TerminalAttachOptions,
  type TerminalCreateOptions,
  type TerminalExit,
  type TerminalOwner,
  type WebSocketConstructor,
  type WebSocketLike,
} from './resources/terminals.ts';
export type { ApiKeyChanges } from './resources/api-keys.ts';
export { SshKeys } from './resources/ssh-keys.ts';
export { Vaults, type VaultChanges, type VaultCreateOptions, type VaultRequestLogOptions, type VaultSecretOptions } from './resources/vaults.ts';
export type { CliAuthPollOptions } from './resources/cli-auth.ts';
export type { StreamedEvent } from './resources/events.ts';
export {
  SandboxdError,
  AuthenticationError,
  RateLimitError,
  QuotaExceededError,
  NetworkError,
  ExecutionError,
  CommandExitError,
  SessionError,
  NotFoundError,
  ValidationError,
  UnsupportedOperationError,
  TemplateBuildFailedError,
  BrowserError,
  BrowserSessionError,
  BrowserInteractionError,
  BrowserTimeoutError,
  BrowserNavigationError,
  ElementNotFoundError,
  ERROR_TABLE,
  errorFor,
  type OperationKind,
  type SandboxdErrorOptions,
  type ValidationIssue,
} from './errors.ts';
export { createPkcePair, codeChallengeOf, type PkcePair } from './pkce.ts';
export { Transport, backoffDelayMs, parseRetryAfter, type RequestOptions } from './transport.ts';
export { VERSION } from './version.ts';
export { PagedList, type Page, type PageLoader } from './pagination.ts';
export { withCamelCase, type WithCamelCase } from './camel-case.ts';
export { MAX_EVENT_STREAM_RECONNECTS, type EventStreamOptions } from './resources/events.ts';
export type * from './api-types.ts';
