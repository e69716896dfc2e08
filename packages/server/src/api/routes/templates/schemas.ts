/**
 * Schemas of templates built from OCI images (the spec's "Snapshot create from an OCI image"; fields not shown
 * there are sandboxd's). The values of `build_args.envs` and `registry_auth` are taken in and never shown again.
 */
import { Type, type Static } from 'typebox';
import {
  MAX_GIT_URL_CHARS,
  MAX_POST_BUILD_CMD_CHARS,
  MIN_BUILD_MEMORY_MB,
  isBuiltin,
  type AnyTemplate,
  type TemplateCreateInput,
  type TemplateLogLine,
} from '../../../core/templates.ts';
import { TEMPLATE_BUILD_STEPS, TEMPLATE_STATUSES } from '../../../model.ts';
import { StringEnum } from '../../schemas/common.ts';
import { SourceName, StringMap, VcpuCount } from '../sessions/schemas.ts';

/**
 * An image reference's characters (the core parses it fully): nothing that a tool could read as an option, a
 * transport or a second argument.
 */
const OciImage = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$',
  description: 'An OCI image reference `[registry/]repository[:tag][@digest]`, e.g. `registry.example.com/team/python:3.12` (no scheme); linux/amd64 is pulled',
});

export const TemplateBuildArgsRequest = Type.Object(
  {
    git_clone_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_GIT_URL_CHARS,
        pattern: '^(https?|git)://[^\\s]+$',
        description: 'A repository (http, https or git URL, no credentials) cloned into `/workspace/<repository name>`; the image needs git',
      }),
    ),
    git_clone_branch: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, pattern: '^[^-\\s][^\\s]*$', description: "The branch to clone (default: the remote's default branch)" }),
    ),
    envs: Type.Optional(StringMap('The environment of `post_build_cmd` (values are never stored or shown)', '^[A-Za-z_][A-Za-z0-9_]{0,127}$')),
    post_build_cmd: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_POST_BUILD_CMD_CHARS,
        description: 'A shell command run in the build VM (bash -lc, else sh -lc) in the clone (else /root); a non-zero exit fails the build',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TemplateCreateRequest = Type.Object(
  {
    name: SourceName,
    oci_image: OciImage,
    build_args: Type.Optional(TemplateBuildArgsRequest),
    registry_auth: Type.Optional(
      Type.Object(
        { username: Type.String({ minLength: 1, maxLength: 256 }), password: Type.String({ minLength: 1, maxLength: 4096 }) },
        { additionalProperties: false, description: 'Credentials for the pull only: never stored, logged or shown' },
      ),
    ),
    vcpu_count: Type.Optional(VcpuCount),
    memory_mb: Type.Optional(
      Type.Integer({ minimum: MIN_BUILD_MEMORY_MB, maximum: 8192, description: "Memory of the build VM, MiB (default: the server's default VM memory)" }),
    ),
  },
  { $id: 'TemplateCreateRequest', title: 'TemplateCreateRequest', additionalProperties: false },
);
export type TemplateCreateBody = Static<typeof TemplateCreateRequest>;

const Progress = Type.Object(
  {
    step: Type.Union([StringEnum(TEMPLATE_BUILD_STEPS), Type.Null()], {
      description: 'The step under way (building), the one it failed in (failed), null when ready',
    }),
    step_index: Type.Integer({ description: '1-based position of `step` among the steps; all of them once ready' }),
    step_count: Type.Integer({
      description: `How many steps a build has (${TEMPLATE_BUILD_STEPS.join(', ')}; git_clone and post_build_cmd are passed over when not asked for)`,
    }),
  },
  { description: 'How far the build got' },
);

export const TemplateRecord = Type.Object(
  {
    template_id: Type.String({ description: '`tpl_…`, or `default` for the built-in image' }),
    name: Type.String(),
    status: StringEnum(TEMPLATE_STATUSES, { description: '"building" until the build ends "ready" (VMs can start from it) or "failed" (see `error`)' }),
    builtin: Type.Boolean({ description: 'The built-in image (listed, never deleted)' }),
    oci_image: Type.Union([Type.String(), Type.Null()], { description: 'The image reference it was built from, normalised' }),
    image_digest: Type.Union([Type.String(), Type.Null()], { description: 'The manifest digest that was pulled' }),
    build_args: Type.Union([
      Type.Object({
        git_clone_url: Type.Union([Type.String(), Type.Null()]),
        git_clone_branch: Type.Union([Type.String(), Type.Null()]),
        env_names: Type.Array(Type.String(), { description: 'The names of `envs` (their values are not kept)' }),
        post_build_cmd: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ]),
    vcpu_count: Type.Union([Type.Integer(), Type.Null()], {
      description: "The build VM's vCPUs: its snapshot of this shape is made at the end (other shapes on first use)",
    }),
    memory_mb: Type.Union([Type.Integer(), Type.Null()]),
    disk_size_mb: Type.Union([Type.Integer(), Type.Null()], { description: 'Size of its root disk, once ready' }),
    node_id: Type.Union([Type.String(), Type.Null()], { description: 'The node that holds its files' }),
    progress: Progress,
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the build failed: the step, what happened and the last lines that step printed' }),
    created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    ready_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'TemplateRecord', title: 'TemplateRecord' },
);
export type TemplateRecordBody = Static<typeof TemplateRecord>;

export const TemplateLogResponse = Type.Object(
  {
    template_id: Type.String(),
    status: StringEnum(TEMPLATE_STATUSES),
    progress: Progress,
    error: Type.Union([Type.String(), Type.Null()]),
    lines: Type.Array(
      Type.Object({
        id: Type.Integer({ description: 'Pass the last one as `after` to read on' }),
        line: Type.String(),
        created_at: Type.String({ format: 'date-time' }),
      }),
    ),
    next_after: Type.Integer({ description: "The `after` of the next page (the last line's id, or the request's `after` when there was none)" }),
  },
  { $id: 'TemplateLogResponse', title: 'TemplateLogResponse' },
);

export const TemplateIdParams = Type.Object({ template_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The request in the core's terms. */
export function toTemplateInput(body: TemplateCreateBody): TemplateCreateInput {
  const args = body.build_args ?? {};
  return {
    name: body.name,
    ociImage: body.oci_image,
    gitCloneUrl: args.git_clone_url ?? null,
    gitCloneBranch: args.git_clone_branch ?? null,
    envs: args.envs ?? {},
    postBuildCmd: args.post_build_cmd ?? null,
    ...(body.vcpu_count !== undefined ? { vcpuCount: body.vcpu_count } : {}),
    ...(body.memory_mb !== undefined ? { memoryMb: body.memory_mb } : {}),
    registryAuth: body.registry_auth ?? null,
  };
}

function progressOf(template: AnyTemplate): Static<typeof Progress> {
  const count = TEMPLATE_BUILD_STEPS.length;
  if (isBuiltin(template) || template.status === 'ready' || template.step === null) return { step: null, step_index: count, step_count: count };
  return { step: template.step, step_index: TEMPLATE_BUILD_STEPS.indexOf(template.step) + 1, step_count: count };
}

export function toTemplateRecord(template: AnyTemplate): TemplateRecordBody {
  if (isBuiltin(template)) {
    return {
      template_id: template.id,
      name: template.name,
      status: 'ready',
      builtin: true,
      oci_image: null,
      image_digest: null,
      build_args: null,
      vcpu_count: null,
      memory_mb: null,
      disk_size_mb: null,
      node_id: null,
      progress: progressOf(template),
      error: null,
      created_at: null,
      updated_at: null,
      ready_at: null,
    };
  }
  return {
    template_id: template.id,
    name: template.name,
    status: template.status,
    builtin: false,
    oci_image: template.ociImage,
    image_digest: template.imageDigest,
    build_args: {
      git_clone_url: template.buildArgs.gitCloneUrl,
      git_clone_branch: template.buildArgs.gitCloneBranch,
      env_names: Object.keys(template.buildArgs.envs),
      post_build_cmd: template.buildArgs.postBuildCmd,
    },
    vcpu_count: template.vcpuCount,
    memory_mb: template.memoryMb,
    disk_size_mb: template.image?.diskSizeMb ?? null,
    node_id: template.nodeId,
    progress: progressOf(template),
    error: template.error,
    created_at: template.createdAt,
    updated_at: template.updatedAt,
    ready_at: template.readyAt,
  };
}

export function toTemplateLog(template: AnyTemplate, lines: TemplateLogLine[], after: number): Static<typeof TemplateLogResponse> {
  const record = toTemplateRecord(template);
  return {
    template_id: record.template_id,
    status: record.status,
    progress: record.progress,
    error: record.error,
    lines: lines.map((line) => ({ id: line.id, line: line.line, created_at: line.createdAt })),
    next_after: lines.at(-1)?.id ?? after,
  };
}

export const TEMPLATE_SCHEMAS = [TemplateCreateRequest, TemplateRecord, TemplateLogResponse];
