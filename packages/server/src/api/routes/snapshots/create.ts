/**
 * POST /v1/snapshots: the spec's "Snapshot create from an OCI image". Clients of the original service call an image
 * built into a bootable snapshot a snapshot; here it is a template (POST /v1/templates), and this is its alias.
 * Snapshots of running VMs are taken with POST /v1/vms/{vm_id}/snapshot.
 */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { TEMPLATE_BUILD_DESCRIPTION, TEMPLATE_CREATE_ERRORS } from '../templates/create.ts';
import { toTemplateInput, toTemplateRecord, type TemplateCreateBody } from '../templates/schemas.ts';

export function registerCreateSnapshotFromImage(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/snapshots',
    {
      schema: {
        tags: ['snapshots'],
        summary: 'Create a snapshot from an OCI image (a template build)',
        description: `The same as POST /v1/templates, which it answers for: the result is a template, found by name wherever a snapshot or template is. ${TEMPLATE_BUILD_DESCRIPTION}`,
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
