import { ImageBuildError, type ImageBuildErrorCode } from '../errors.ts';
import type { OciBuildStep } from './types.ts';

/** Stable codes of OCI image build failures. */
export type OciImageErrorCode =
  /** The reference is not `[registry/]repository[:tag][@digest]`; no tool was run. */
  | 'OCI_REFERENCE_INVALID'
  /** The registry has no such repository, tag or digest. */
  | 'OCI_NOT_FOUND'
  /** The registry refused the credentials (or asks for some and none were given). */
  | 'OCI_UNAUTHORIZED'
  /** The registry could not be reached (refused, no such host, TLS failure, HTTP where HTTPS was expected). */
  | 'OCI_REGISTRY_UNREACHABLE'
  /** The registry is, or resolves to, an address pulls may not reach (loopback, private, link-local, metadata). */
  | 'OCI_REGISTRY_FORBIDDEN'
  /** The image is of a kind sandboxd does not boot (not linux/amd64, schema 1, a root filesystem it cannot use). */
  | 'OCI_UNSUPPORTED'
  /** A host tool is not installed; the message names the Debian package. */
  | 'OCI_TOOL_MISSING'
  /** A tool failed otherwise; `outputTail` has its last lines. */
  | 'OCI_COMMAND_FAILED'
  /** An option or input file is invalid (disk size, credentials, agent bundle, recipes, kernel). */
  | 'OCI_INPUT_INVALID'
  /** Building needs root (layer ownership, the ext4 image). */
  | 'OCI_NOT_ROOT'
  /** Another process held a layer's build lock for longer than `lockTimeoutMs`. */
  | 'OCI_LOCK_TIMEOUT'
  /** The caller's signal aborted the build. */
  | 'OCI_ABORTED';

/** A failed OCI image build; `step` says where it failed. */
export class OciImageError extends Error {
  override readonly name = 'OciImageError';
  readonly code: OciImageErrorCode;
  step?: OciBuildStep;
  /** Last lines printed by the failing tool, when a tool failed. */
  readonly outputTail: string[];

  constructor(code: OciImageErrorCode, message: string, details: { step?: OciBuildStep; outputTail?: string[]; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.step = details.step;
    this.outputTail = details.outputTail ?? [];
  }
}

const FROM_IMAGE_BUILD: Record<ImageBuildErrorCode, OciImageErrorCode> = {
  IMAGE_TOOL_MISSING: 'OCI_TOOL_MISSING',
  IMAGE_COMMAND_FAILED: 'OCI_COMMAND_FAILED',
  IMAGE_KERNEL_NOT_FOUND: 'OCI_INPUT_INVALID',
  IMAGE_INPUT_INVALID: 'OCI_INPUT_INVALID',
  IMAGE_LOCK_TIMEOUT: 'OCI_LOCK_TIMEOUT',
  IMAGE_NOT_ROOT: 'OCI_NOT_ROOT',
};

/**
 * Turns whatever a step threw into an `OciImageError` of that step: a tool's `ImageBuildError` keeps its output
 * tail (and says which lower layer failed, when one did), an abort becomes `OCI_ABORTED`.
 */
export function asOciImageError(error: unknown, step: OciBuildStep): OciImageError {
  if (error instanceof OciImageError) {
    error.step ??= step;
    return error;
  }
  if (error instanceof ImageBuildError) {
    const where = error.layer ? ` (layer ${error.layer}${error.stage ? `, ${error.stage}` : ''})` : '';
    return new OciImageError(FROM_IMAGE_BUILD[error.code], `${error.message}${where}`, { step, outputTail: error.outputTail, cause: error });
  }
  if ((error as { name?: string } | null)?.name === 'AbortError')
    return new OciImageError('OCI_ABORTED', `the build was aborted during ${step}`, { step, cause: error });
  return new OciImageError('OCI_COMMAND_FAILED', `${step} failed: ${error instanceof Error ? error.message : String(error)}`, { step, cause: error });
}

/** How a registry answer that skopeo reports reads in its output (containers/image and registry messages). */
const REGISTRY_FAILURES: readonly [RegExp, OciImageErrorCode, string][] = [
  [
    /unauthorized|authentication required|invalid username\/password|status 401|denied: requested access/i,
    'OCI_UNAUTHORIZED',
    'the registry refused access: check the credentials',
  ],
  [/manifest unknown|name unknown|repository name not known|not found|status 404/i, 'OCI_NOT_FOUND', 'the registry has no such image'],
  [/server gave HTTP response to HTTPS client/i, 'OCI_REGISTRY_UNREACHABLE', 'the registry speaks plain HTTP: list it in the insecure registries to use it'],
  [
    /connection refused|no such host|i\/o timeout|network is unreachable|x509:|tls:|certificate|EOF$/i,
    'OCI_REGISTRY_UNREACHABLE',
    'the registry could not be reached',
  ],
];

/**
 * Classifies a failed skopeo run by its output: an authentication failure, an unknown image and an unreachable
 * registry each get their own code and a message that says what to change; anything else stays a command failure.
 */
export function classifyRegistryFailure(error: unknown, step: OciBuildStep, what: string): OciImageError {
  const failure = asOciImageError(error, step);
  if (failure.code !== 'OCI_COMMAND_FAILED') return failure;
  const text = failure.outputTail.join('\n');
  for (const [pattern, code, hint] of REGISTRY_FAILURES) {
    if (pattern.test(text)) {
      const detail = failure.outputTail.filter((line) => pattern.test(line)).at(-1) ?? failure.message;
      return new OciImageError(code, `${what}: ${hint} (${toolMessage(detail)})`, { step, outputTail: failure.outputTail, cause: failure });
    }
  }
  return failure;
}

/**
 * The message of a logrus line (`time="…" level=fatal msg="…"`), unquoted, without skopeo's restatement of the
 * image name it was given.
 */
export function toolMessage(line: string): string {
  const quoted = /\bmsg="((?:[^"\\]|\\.)*)"/.exec(line)?.[1];
  const message = quoted === undefined ? line : quoted.replace(/\\(.)/g, '$1');
  return message.replace(/^Error parsing image name "[^"]*": /, '').trim();
}
