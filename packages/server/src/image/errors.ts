import type { ImageLayer } from './types.ts';

/** Stable codes of image build failures. */
export type ImageBuildErrorCode =
  /** A host tool is not installed; the message names the Debian package. */
  | 'IMAGE_TOOL_MISSING'
  /** A build command exited non-zero; `outputTail` has its last lines. */
  | 'IMAGE_COMMAND_FAILED'
  /** No usable kernel (vmlinuz + modules) is installed, or the requested one is missing. */
  | 'IMAGE_KERNEL_NOT_FOUND'
  /** A recipe, option or input file is invalid or missing. */
  | 'IMAGE_INPUT_INVALID'
  /** Another process held the layer's build lock for longer than `lockTimeoutMs`. */
  | 'IMAGE_LOCK_TIMEOUT'
  /** Building the root filesystem needs root (mmdebstrap root mode, file ownership in the ext4 image). */
  | 'IMAGE_NOT_ROOT';

/** A failed image build; `layer` and `stage` say where it failed. */
export class ImageBuildError extends Error {
  override readonly name = 'ImageBuildError';
  readonly code: ImageBuildErrorCode;
  layer?: ImageLayer;
  stage?: string;
  /** Last lines printed by the failing command, when a command failed. */
  readonly outputTail: string[];

  constructor(code: ImageBuildErrorCode, message: string, details: { outputTail?: string[]; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.outputTail = details.outputTail ?? [];
  }
}
