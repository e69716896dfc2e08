/**
 * Templates built from OCI images (issue 16): a build is a background job with a status, a step, a log and
 * events. `create` checks the request, reserves the name (one namespace with the user's snapshots) with a
 * `building` row and `template.build.started`, and queues the build: one at a time per node, later ones wait. The
 * engine runs the image steps (resolve, pull, unpack, runtime, mkfs), boots the build VM, hands its agent to
 * `runBuildSteps` (git_clone, post_build_cmd), captures it and makes its snapshot; the row follows each step and
 * ends `ready` with the image record and `template.build.succeeded`, or `failed` with the step, an error that
 * says what happened (with the tail of that step's output) and `template.build.failed`.
 *
 * Secrets stay in memory: registry credentials reach only the pull, and the values of `envs` only the
 * post-build command; the row keeps the names of `envs`, never the values, and neither is logged.
 */
import { EventEmitter, once } from 'node:events';
import pLimit from 'p-limit';
import { parseImageReference } from '../image/oci/reference.ts';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newTemplateId } from './ids.ts';
import { DEFAULT_TEMPLATE_ID, TEMPLATE_BUILD_STEPS, type Template, type TemplateBuildStep } from '../model.ts';
import { BuildLog } from './template-build-log.ts';
import { runBuildSteps, type RepositoryFetcher } from './template-build-steps.ts';
import { TemplateBuildError, type VmEngine } from './vm-engine.ts';
import type { VmSources } from './vm-sources.ts';
import { type Database, isUniqueViolation } from '../store/database.ts';
import { findSnapshotOfTemplate } from '../store/snapshots-store.ts';
import {
  appendTemplateLog,
  countBuildingTemplatesOfUser,
  deleteTemplateRow,
  insertTemplate,
  listBuildingTemplatesOfNode,
  listTemplateLog,
  listTemplates,
  updateBuildingTemplate,
} from '../store/templates-store.ts';
import { templateInUseByVm } from '../store/vms-store.ts';

/** What a build request asks for (the API's fields, checked again here). */
export interface TemplateCreateInput {
  name: string;
  ociImage: string;
  gitCloneUrl?: string | null;
  gitCloneBranch?: string | null;
  /** Values never stored, logged or returned. */
  envs?: Record<string, string>;
  postBuildCmd?: string | null;
  vcpuCount?: number;
  memoryMb?: number;
  /** For the pull only; never stored or logged. */
  registryAuth?: { username: string; password: string } | null;
}

/** The built-in template: the guest image every VM starts from unless told otherwise. Listed, never deleted. */
export interface BuiltinTemplate {
  id: typeof DEFAULT_TEMPLATE_ID;
  name: typeof DEFAULT_TEMPLATE_ID;
  builtin: true;
}

export const BUILTIN_TEMPLATE: BuiltinTemplate = { id: DEFAULT_TEMPLATE_ID, name: DEFAULT_TEMPLATE_ID, builtin: true };

export type AnyTemplate = Template | BuiltinTemplate;

export function isBuiltin(template: AnyTemplate): template is BuiltinTemplate {
  return 'builtin' in template;
}

export interface TemplateLogLine {
  id: number;
  line: string;
  createdAt: string;
}

export interface TemplateServiceOptions {
  defaultVcpuCount: number;
  defaultMemoryMb: number;
  postBuildTimeoutMs: number;
  /** Builds a user may have `building` at once (SANDBOXD_TEMPLATE_MAX_BUILDS_PER_USER). */
  maxBuildsPerUser: number;
}

/** Template name rules (as snapshot names): they appear in requests next to snapshot names. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_ENVS = 64;
const MAX_ENV_VALUE_CHARS = 4096;
export const MAX_POST_BUILD_CMD_CHARS = 16_384;
export const MAX_GIT_URL_CHARS = 2048;
const VCPU_CHOICES = [1, 2, 4, 6, 8];
/** A build VM runs the agent, git and the user's command: below this it does not get far. */
export const MIN_BUILD_MEMORY_MB = 256;
const MAX_BUILD_MEMORY_MB = 8192;
/** Lines and characters of a step's output kept in a failed build's error. */
const ERROR_TAIL_LINES = 20;
const ERROR_TAIL_CHARS = 4000;
/** How long a waiting log read sleeps before it looks again (other nodes' builds have no wake-up here). */
const LOG_WAIT_POLL_MS = 1000;
/** The longest a log read may wait for news (`waitMs`). */
export const MAX_LOG_WAIT_MS = 30_000;
/** How long deleting a building template waits for its build to stop. */
const CANCEL_WAIT_MS = 60_000;

export class TemplateService {
  /** One build at a time on this node: a build boots VMs twice and is CPU-bound under TCG. */
  private readonly queue = pLimit(1);
  private readonly builds = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /** Wakes log reads that wait for news (an event named by the template id, on each step and each log batch). */
  private readonly changes = new EventEmitter();
  private stopping = false;
  /** Aborted by stop(): waiting log reads answer at once. */
  private readonly stopped = new AbortController();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly sources: VmSources,
    private readonly fetcher: RepositoryFetcher,
    private readonly options: TemplateServiceOptions,
  ) {
    this.changes.setMaxListeners(0);
  }

  /** The built-in template, then the caller's templates, newest first. */
  async list(principal: Principal, limit: number, offset: number): Promise<AnyTemplate[]> {
    if (offset === 0) return [BUILTIN_TEMPLATE, ...(limit > 1 ? await listTemplates(this.database.db, principal.userId, limit - 1, 0) : [])];
    return listTemplates(this.database.db, principal.userId, limit, offset - 1);
  }

  async get(principal: Principal, id: string): Promise<AnyTemplate> {
    if (id === DEFAULT_TEMPLATE_ID) return BUILTIN_TEMPLATE;
    return this.sources.ownedTemplate(principal.userId, id);
  }

  /** Checks the request, records a `building` template and queues its build; answers the record at once. */
  async create(principal: Principal, input: TemplateCreateInput): Promise<Template> {
    const checked = this.check(input);
    const id = newTemplateId();
    const now = this.clock.now().toISOString();
    const template: Template = {
      id,
      userId: principal.userId,
      name: input.name,
      status: 'building',
      ociImage: checked.ociImage,
      imageDigest: null,
      buildArgs: {
        gitCloneUrl: checked.gitCloneUrl,
        gitCloneBranch: checked.gitCloneBranch,
        envs: Object.fromEntries(Object.keys(checked.envs).map((name) => [name, ''])),
        postBuildCmd: checked.postBuildCmd,
      },
      vcpuCount: checked.vcpuCount,
      memoryMb: checked.memoryMb,
      nodeId: this.engine.nodeId,
      image: null,
      step: 'resolve',
      error: null,
      createdAt: now,
      updatedAt: now,
      readyAt: null,
    };
    let created: Template;
    try {
      created = await this.database.db.transaction().execute(async (trx) => {
        await this.sources.assertNameFree(trx, principal.userId, input.name);
        // The queue is one per node and builds are long: one user must not fill it.
        const building = await countBuildingTemplatesOfUser(trx, principal.userId);
        if (building >= this.options.maxBuildsPerUser) {
          throw new AppError(
            'QUOTA_EXCEEDED',
            `you have ${building} template builds under way or queued (at most ${this.options.maxBuildsPerUser}): wait for one to end, or delete one`,
          );
        }
        const row = await insertTemplate(trx, template);
        await recordEvent(trx, this.clock, {
          type: 'template.build.started',
          userId: principal.userId,
          subjectId: id,
          data: { template_id: id, name: input.name, oci_image: checked.ociImage },
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `you already have a snapshot or template named "${input.name}"`);
      throw error;
    }
    this.notifier.committed();
    if (this.stopping) {
      await this.finishFailed(created, new TemplateBuildError('resolve', 'the server is stopping: build the template again'));
      return created;
    }
    const controller = new AbortController();
    const done = this.queue(() => this.build(created, { envs: checked.envs, registryAuth: checked.registryAuth }, controller.signal)).finally(() => {
      this.builds.delete(id);
      this.changed(id);
    });
    this.builds.set(id, { controller, done });
    return created;
  }

  /**
   * Deletes a template and its files. The built-in one cannot be; one that a VM that has not ended (running or
   * paused) started from, or that a snapshot's chain starts from, is refused (409). A building template's build is
   * cancelled.
   */
  async delete(principal: Principal, id: string): Promise<Template> {
    const template = await this.get(principal, id);
    if (isBuiltin(template)) throw new AppError('CONFLICT', `"${DEFAULT_TEMPLATE_ID}" is the built-in template: it cannot be deleted`);
    const vm = await templateInUseByVm(this.database.db, id);
    if (vm) throw new AppError('CONFLICT', `VM ${vm.id} (${vm.status}) started from template ${template.name}: kill it first`);
    const snapshot = await findSnapshotOfTemplate(this.database.db, id);
    if (snapshot) throw new AppError('CONFLICT', `snapshot ${snapshot.name} builds on template ${template.name}: delete it first`);
    this.sources.assertLocal(template, `template ${template.name}`);
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteTemplateRow(trx, id))) return false;
      await recordEvent(trx, this.clock, { type: 'template.deleted', userId: principal.userId, subjectId: id, data: { template_id: id, name: template.name } });
      return true;
    });
    if (!deleted) throw notFound(`template ${id}`);
    this.notifier.committed();
    this.changed(id);
    const build = this.builds.get(id);
    if (build) {
      build.controller.abort(new Error('the template was deleted'));
      await Promise.race([build.done, new Promise((resolve) => setTimeout(resolve, CANCEL_WAIT_MS).unref())]);
    }
    await this.engine.deleteTemplate(id);
    return template;
  }

  /**
   * A page of a build's log after line `after` (0: from the start), with the template as it was just before the
   * lines were read: the log is complete before a build's status changes, so a template no longer `building` comes
   * with every line it will ever have. With `waitMs`, a read that finds no new line of a build under way waits
   * (at most `MAX_LOG_WAIT_MS`) until there is one or the build ends (long polling: a follower needs no tight loop).
   */
  async logs(principal: Principal, id: string, after: number, limit: number, waitMs = 0): Promise<{ template: AnyTemplate; lines: TemplateLogLine[] }> {
    const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_LOG_WAIT_MS);
    for (;;) {
      // Listen before reading, so a change between the read and the wait is not missed.
      const pause = Math.min(LOG_WAIT_POLL_MS, deadline - Date.now());
      const woken =
        pause > 0 ? once(this.changes, id, { signal: AbortSignal.any([this.stopped.signal, AbortSignal.timeout(pause)]) }).catch(() => undefined) : undefined;
      const template = await this.get(principal, id);
      if (isBuiltin(template)) return { template, lines: [] };
      const lines = await listTemplateLog(this.database.db, id, after, limit);
      // A listener left behind ends at its timeout, within a second.
      if (lines.length > 0 || template.status !== 'building' || !woken || this.stopped.signal.aborted) return { template, lines };
      await woken;
    }
  }

  /**
   * At start, before serving: builds this node still records as `building` died with the previous process. They
   * end failed (with their event) and what they left on disk is removed. Resolves how many there were.
   */
  async failInterruptedBuilds(): Promise<number> {
    const interrupted = await listBuildingTemplatesOfNode(this.database.db, this.engine.nodeId);
    for (const template of interrupted) {
      const step = template.step ?? 'resolve';
      await this.finishFailed(template, new TemplateBuildError(step, `the server stopped during the build (step ${step}): build the template again`));
    }
    return interrupted.length;
  }

  /** At a graceful stop: builds under way are cancelled and end failed; queued ones too. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    const builds = [...this.builds.values()];
    for (const build of builds) build.controller.abort(new Error('the server is stopping'));
    await Promise.allSettled(builds.map((build) => build.done));
  }

  private changed(id: string): void {
    this.changes.emit(id);
  }

  /** Checks a request beyond its schema (the core's own rules), normalising what it keeps. */
  private check(input: TemplateCreateInput) {
    const bad = (message: string) => new AppError('BAD_REQUEST', message);
    if (!NAME.test(input.name)) throw bad('name: use 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit');
    let ociImage: string;
    try {
      ociImage = parseImageReference(input.ociImage).canonical;
    } catch (error) {
      throw bad(`oci_image: ${(error as Error).message}`);
    }
    const gitCloneUrl = input.gitCloneUrl ? checkGitUrl(input.gitCloneUrl) : null;
    const gitCloneBranch = input.gitCloneBranch ?? null;
    if (gitCloneBranch !== null) {
      if (!gitCloneUrl) throw bad('build_args.git_clone_branch needs build_args.git_clone_url');
      if (!isBranchName(gitCloneBranch))
        throw bad(`build_args.git_clone_branch: "${gitCloneBranch}" is not a branch name (git check-ref-format rules; it may not start with "-")`);
    }
    const envs = input.envs ?? {};
    if (Object.keys(envs).length > MAX_ENVS) throw bad(`build_args.envs: at most ${MAX_ENVS} variables`);
    for (const [name, value] of Object.entries(envs)) {
      if (!ENV_NAME.test(name)) throw bad(`build_args.envs: "${name}" is not a variable name (letters, digits and "_", not starting with a digit)`);
      if (typeof value !== 'string' || value.length > MAX_ENV_VALUE_CHARS || value.includes('\0'))
        throw bad(`build_args.envs.${name}: a string of at most ${MAX_ENV_VALUE_CHARS} characters without NUL`);
    }
    const postBuildCmd = input.postBuildCmd ?? null;
    if (postBuildCmd !== null && (postBuildCmd.trim() === '' || postBuildCmd.length > MAX_POST_BUILD_CMD_CHARS || postBuildCmd.includes('\0'))) {
      throw bad(`build_args.post_build_cmd: a non-empty command of at most ${MAX_POST_BUILD_CMD_CHARS} characters without NUL`);
    }
    const vcpuCount = input.vcpuCount ?? this.options.defaultVcpuCount;
    if (!VCPU_CHOICES.includes(vcpuCount)) throw bad(`vcpu_count must be one of ${VCPU_CHOICES.join(', ')}`);
    const memoryMb = input.memoryMb ?? Math.max(this.options.defaultMemoryMb, MIN_BUILD_MEMORY_MB);
    if (!Number.isInteger(memoryMb) || memoryMb < MIN_BUILD_MEMORY_MB || memoryMb > MAX_BUILD_MEMORY_MB)
      throw bad(`memory_mb must be from ${MIN_BUILD_MEMORY_MB} to ${MAX_BUILD_MEMORY_MB}`);
    const auth = input.registryAuth ?? null;
    if (auth !== null && (auth.username === '' || auth.password === '')) throw bad('registry_auth needs a non-empty username and password');
    return { ociImage, gitCloneUrl, gitCloneBranch, envs, postBuildCmd, vcpuCount, memoryMb, registryAuth: auth };
  }

  /** The build job: runs the steps and records the outcome (unless the template was deleted meanwhile). */
  private async build(
    template: Template,
    secrets: { envs: Record<string, string>; registryAuth: { username: string; password: string } | null },
    signal: AbortSignal,
  ): Promise<void> {
    const started = Date.now();
    if (signal.aborted) {
      // Cancelled while queued: deleted (nothing to record), or the server is stopping.
      if (this.stopping)
        await this.finishFailed(template, new TemplateBuildError('resolve', 'the server stopped before the build started: build the template again'));
      return;
    }
    const { id } = template;
    const log = new BuildLog({
      write: (lines) => appendTemplateLog(this.database.db, id, lines, this.clock.now().toISOString()),
      written: () => this.changed(id),
    });
    let step: TemplateBuildStep = 'resolve';
    let stepWrites: Promise<unknown> = Promise.resolve();
    const onStep = (next: TemplateBuildStep) => {
      step = next;
      log.line(`==> step ${TEMPLATE_BUILD_STEPS.indexOf(next) + 1}/${TEMPLATE_BUILD_STEPS.length}: ${next}`);
      const at = this.clock.now().toISOString();
      stepWrites = stepWrites
        .then(() => updateBuildingTemplate(this.database.db, id, { step: next, updatedAt: at }))
        .then(
          () => this.changed(id),
          () => undefined,
        );
    };
    log.line(`building template ${template.name} (${id}) from ${template.ociImage} on node ${template.nodeId}`);
    try {
      const built = await this.engine.buildTemplate({
        templateId: id,
        userId: template.userId,
        ociImage: template.ociImage,
        ...(secrets.registryAuth ? { registryAuth: secrets.registryAuth } : {}),
        vcpuCount: template.vcpuCount,
        memoryMb: template.memoryMb,
        signal,
        onStep,
        onOutput: (line) => log.line(line),
        inVm: (agent) =>
          runBuildSteps(
            agent,
            { ...template.buildArgs, envs: secrets.envs },
            { fetcher: this.fetcher, signal, onStep, log: (line) => log.line(line), postBuildTimeoutMs: this.options.postBuildTimeoutMs },
          ),
      });
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      log.line(
        `template ${template.name} is ready (${seconds} s; ${Object.entries(built.stepMs)
          .map(([name, ms]) => `${name} ${((ms ?? 0) / 1000).toFixed(1)} s`)
          .join(', ')})`,
      );
      await log.flush();
      await stepWrites;
      const ready = await this.database.db.transaction().execute(async (trx) => {
        const now = this.clock.now().toISOString();
        const row = await updateBuildingTemplate(trx, id, {
          status: 'ready',
          image: { ...built.image, env: built.env },
          imageDigest: built.digest,
          step: null,
          error: null,
          updatedAt: now,
          readyAt: now,
        });
        if (!row) return undefined;
        await recordEvent(trx, this.clock, {
          type: 'template.build.succeeded',
          userId: template.userId,
          subjectId: id,
          data: { template_id: id, name: template.name, image_digest: built.digest, duration_ms: Date.now() - started },
        });
        return row;
      });
      if (ready) this.notifier.committed();
      else await this.engine.deleteTemplate(id); // deleted while it built
    } catch (error) {
      const failure =
        error instanceof TemplateBuildError
          ? error
          : new TemplateBuildError(step, error instanceof Error ? error.message : String(error), [], { cause: error });
      if (signal.aborted && this.stopping) failure.message = `the server stopped during the build (step ${failure.step}): build the template again`;
      else if (signal.aborted) failure.message = `the build was cancelled during ${failure.step}`;
      log.line(`build failed at ${failure.step}: ${failure.message}`);
      await log.flush();
      await stepWrites;
      await this.finishFailed(template, failure);
    }
  }

  /** Records a build's failure (when the template still exists) and removes what it left on disk. */
  private async finishFailed(template: Template, failure: TemplateBuildError): Promise<void> {
    const error = errorText(failure);
    const failed = await this.database.db.transaction().execute(async (trx) => {
      const row = await updateBuildingTemplate(trx, template.id, { status: 'failed', step: failure.step, error, updatedAt: this.clock.now().toISOString() });
      if (!row) return false;
      await recordEvent(trx, this.clock, {
        type: 'template.build.failed',
        userId: template.userId,
        subjectId: template.id,
        data: { template_id: template.id, name: template.name, step: failure.step, error },
      });
      return true;
    });
    if (failed) this.notifier.committed();
    await this.engine.deleteTemplate(template.id).catch(() => undefined);
  }
}

/** A failed build's error: what happened in which step, and the last lines that step printed. */
function errorText(failure: TemplateBuildError): string {
  const head = `${failure.step}: ${failure.message}`;
  const tail = failure.outputTail.slice(-ERROR_TAIL_LINES).join('\n');
  if (tail === '' || head.includes(tail)) return head;
  const cut = tail.length > ERROR_TAIL_CHARS ? `…${tail.slice(-ERROR_TAIL_CHARS)}` : tail;
  return `${head}\n--- last output of ${failure.step} ---\n${cut}`;
}

/** http, https or git URLs of at most 2048 characters, without credentials; answers the URL normalised. */
export function checkGitUrl(raw: string): string {
  const bad = (why: string) => new AppError('BAD_REQUEST', `build_args.git_clone_url: ${why}`);
  if (raw.length > MAX_GIT_URL_CHARS) throw bad(`at most ${MAX_GIT_URL_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw bad('it contains white space or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad(`"${raw}" is not an absolute URL`);
  }
  if (!['http:', 'https:', 'git:'].includes(url.protocol)) throw bad(`only http://, https:// and git:// URLs are cloned, not ${url.protocol}//`);
  if (url.username !== '' || url.password !== '')
    throw bad('put no credentials in the URL: only repositories that need none can be cloned (a URL is stored and shown)');
  if (url.hostname === '') throw bad('the URL has no host');
  if (url.pathname === '/' || url.pathname === '') throw bad('the URL names no repository');
  return url.toString();
}

/** `git check-ref-format --branch` rules, and no leading "-" (it would read as an option). */
export function isBranchName(name: string): boolean {
  if (
    name.length === 0 ||
    name.length > 255 ||
    name.startsWith('-') ||
    name.startsWith('/') ||
    name.endsWith('/') ||
    name.endsWith('.') ||
    name.endsWith('.lock')
  )
    return false;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f~^:?*[\\]|\.\.|\/\/|@\{|^@$/.test(name)) return false;
  return name.split('/').every((part) => part !== '' && !part.startsWith('.'));
}
