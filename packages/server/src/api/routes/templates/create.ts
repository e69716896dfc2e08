/** POST /v1/templates: build a template from an OCI image (a background job; answers at once). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toTemplateInput, toTemplateRecord, type TemplateCreateBody } from './schemas.ts';

/** What POST /v1/templates and its alias POST /v1/snapshots (with `oci_image`) say about a build. */
export const TEMPLATE_BUILD_DESCRIPTION =
  'Pulls the OCI image (linux/amd64), makes it bootable with the sandboxd agent, boots it as a build VM, clones `build_args.git_clone_url` into `/workspace/<repository name>` (the server fetches it; the image needs git), runs `build_args.post_build_cmd` with `build_args.envs`, and snapshots the result. ' +
  'Answers 202 at once with the template `building`; follow `GET /v1/templates/{template_id}/logs`, then start VMs with `template: <name>`. Builds run one at a time per node. ' +
  'The name is shared with your snapshots. `registry_auth` and the values of `envs` are used for this build only: never stored, logged or shown.';

export const TEMPLATE_CREATE_ERRORS = {
  400: 'The image reference, git URL or branch, a variable name or the shape is not acceptable (the message says what to change)',
  409: 'You already have a snapshot or template of this name',
  429: 'You have SANDBOXD_TEMPLATE_MAX_BUILDS_PER_USER builds under way or queued (QUOTA_EXCEEDED)',
};

export function registerCreateTemplate(app: App, context: RouteContext): void {
  registerTemplateBuild(app, context, {
    url: '/v1/templates',
    tag: 'templates',
    summary: 'Build a template from an OCI image',
    description: TEMPLATE_BUILD_DESCRIPTION,
  });
}

/** A route that starts a template build: POST /v1/templates, and its alias POST /v1/snapshots (one handler). */
export function registerTemplateBuild(
  app: App,
  { services, requireAuth }: RouteContext,
  route: { url: string; tag: string; summary: string; description: string },
): void {
  app.post(
    route.url,
    {
      schema: {
        tags: [route.tag],
        summary: route.summary,
        description: route.description,
        security: BEARER_OR_API_KEY,
        body: Type.Ref('TemplateCreateRequest'),
        response: authedResponses({ 202: Type.Ref('TemplateRecord') }, TEMPLATE_CREATE_ERRORS),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const template = await services.sandbox.templates.create(principalOf(request), toTemplateInput(request.body as TemplateCreateBody));
      reply.code(202);
      return toTemplateRecord(template);
    },
  );
}
