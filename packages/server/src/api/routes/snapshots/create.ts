/**
 * POST /v1/snapshots: the spec's "Snapshot create from an OCI image". Clients of the original service call an image
 * built into a bootable snapshot a snapshot; here it is a template (POST /v1/templates), and this is its alias.
 * Snapshots of running VMs are taken with POST /v1/vms/{vm_id}/snapshot.
 */
import type { App, RouteContext } from '../../types.ts';
import { registerTemplateBuild, TEMPLATE_BUILD_DESCRIPTION } from '../templates/create.ts';

export function registerCreateSnapshotFromImage(app: App, context: RouteContext): void {
  registerTemplateBuild(app, context, {
    url: '/v1/snapshots',
    tag: 'snapshots',
    summary: 'Create a snapshot from an OCI image (a template build)',
    description: `The same as POST /v1/templates, which it answers for: the result is a template, found by name wherever a snapshot or template is. ${TEMPLATE_BUILD_DESCRIPTION}`,
  });
}
