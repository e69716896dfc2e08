/** Templates: VMs' root images built from OCI images (a build runs on the server; follow it, then start VMs by name). */
import type { TemplateLog, TemplateRecord } from '../api-types.ts';
import { SandboxdError, TemplateBuildFailedError } from '../errors.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { offsetPages, type PagedList } from '../pagination.ts';

export interface TemplateCreateOptions extends CallOptions {
  /** Unique among your templates and snapshots; VMs start from it with `template: name`. */
  name: string;
  /** `[registry/]repository[:tag][@digest]`, e.g. `registry.example.com/team/python:3.12`. */
  ociImage: string;
  /** A repository cloned into `/workspace/<repository name>` (the image needs git). */
  gitCloneUrl?: string;
  gitCloneBranch?: string;
  /** A shell command run in the build VM after the clone; a non-zero exit fails the build. */
  postBuildCmd?: string;
  /** The environment of `postBuildCmd` (never stored or shown). */
  envs?: Record<string, string>;
  /** Credentials for the pull only (never stored or shown). */
  registryAuth?: { username: string; password: string };
  vcpuCount?: 1 | 2 | 4 | 6 | 8;
  memoryMb?: number;
}

export interface TemplateWaitOptions {
  /** Milliseconds to wait in all (default 1800000: a large image under TCG takes long). */
  timeoutMs?: number;
  /** Each new line of the build's log, as it is read. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

/** Lines per page of a log read, and how long one read may wait for news (the server's maximum). */
const PAGE_LINES = 5000;
const LOG_WAIT_SECONDS = 30;

export class Templates {
  constructor(private readonly transport: Transport) {}

  /** Starts a build; answers at once with the template `building` (see `waitUntilReady`). */
  create(options: TemplateCreateOptions): Promise<TemplateRecord> {
    const buildArgs = {
      ...(options.gitCloneUrl !== undefined ? { git_clone_url: options.gitCloneUrl } : {}),
      ...(options.gitCloneBranch !== undefined ? { git_clone_branch: options.gitCloneBranch } : {}),
      ...(options.postBuildCmd !== undefined ? { post_build_cmd: options.postBuildCmd } : {}),
      ...(options.envs !== undefined ? { envs: options.envs } : {}),
    };
    return this.transport.call('/v1/templates', 'post', {
      json: {
        name: options.name,
        oci_image: options.ociImage,
        ...(Object.keys(buildArgs).length > 0 ? { build_args: buildArgs } : {}),
        ...(options.registryAuth !== undefined ? { registry_auth: options.registryAuth } : {}),
        ...(options.vcpuCount !== undefined ? { vcpu_count: options.vcpuCount } : {}),
        ...(options.memoryMb !== undefined ? { memory_mb: options.memoryMb } : {}),
      },
      signal: options.signal,
    });
  }

  /** The built-in template (`default`), then yours, newest first. */
  list(options: { limit?: number; offset?: number; signal?: AbortSignal } = {}): PagedList<TemplateRecord> {
    return offsetPages(options, (query) => this.transport.call('/v1/templates', 'get', { query, signal: options.signal }));
  }

  get(templateId: string, options: CallOptions = {}): Promise<TemplateRecord> {
    return this.transport.call('/v1/templates/{template_id}', 'get', { params: { template_id: templateId }, signal: options.signal });
  }

  /**
   * A page of the build's log after line `after` (0: from the start), with the build's status and step. With
   * `waitSeconds` (at most 30), the server holds a request that finds no new line until one comes or the build ends.
   */
  logs(templateId: string, options: { after?: number; limit?: number; waitSeconds?: number; signal?: AbortSignal } = {}): Promise<TemplateLog> {
    return this.transport.call('/v1/templates/{template_id}/logs', 'get', {
      params: { template_id: templateId },
      query: { after: options.after, limit: options.limit, wait_seconds: options.waitSeconds },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Deletes the template (a build under way is cancelled); a SandboxdError with status 409 while a VM or a snapshot builds on it. */
  async delete(templateId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/templates/{template_id}', 'delete', { params: { template_id: templateId }, signal: options.signal });
  }

  /**
   * Follows the build's log until it is over: resolves the ready template, rejects with `TemplateBuildFailedError`
   * when it failed, or with an error when `timeoutMs` passes first (the build goes on).
   */
  async waitUntilReady(templateId: string, options: TemplateWaitOptions = {}): Promise<TemplateRecord> {
    const timeoutMs = options.timeoutMs ?? 1_800_000;
    const deadline = Date.now() + timeoutMs;
    let after = 0;
    for (;;) {
      const remainingSeconds = Math.floor((deadline - Date.now()) / 1000);
      // Long polling: the server answers as soon as there is a new line or the build ended.
      const page = await this.logs(templateId, {
        after,
        limit: PAGE_LINES,
        waitSeconds: Math.max(1, Math.min(LOG_WAIT_SECONDS, remainingSeconds)),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for (const line of page.lines) options.onLine?.(line.line);
      after = page.next_after;
      // A page that is full may have more behind it; the status came with the log complete.
      if (page.status !== 'building' && page.lines.length < PAGE_LINES) {
        const template = await this.get(templateId, { signal: options.signal });
        if (template.status === 'failed') {
          throw new TemplateBuildFailedError(`template ${template.name} failed to build: ${template.error ?? 'no reason recorded'}`, {
            templateId,
            step: template.progress.step,
          });
        }
        return template;
      }
      if (page.lines.length < PAGE_LINES && Date.now() >= deadline) throw new SandboxdError(`template ${templateId} is still building after ${timeoutMs} ms`);
    }
  }
}
