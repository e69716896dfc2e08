/** POST /v1/volumes: make a persistent volume (an empty ext4 filesystem) on this node. */
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import { MIN_VOLUME_MB } from '../../../core/volumes.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVolumeRecord, VolumeName } from './schemas.ts';

/** The largest size the schema lets through; the plan's volume budget is the real bound. */
const MAX_VOLUME_MB = 1_048_576;

export function registerCreateVolume(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/volumes',
    {
      schema: {
        tags: ['volumes'],
        summary: 'Create a persistent volume',
        description:
          'Makes a volume of `size_gb` GiB or `size_mb` MiB (exactly one) holding an empty ext4 filesystem on this node\'s disk. It outlives VMs: mount it in new VMs with `POST /v1/vms {"volumes": [{"volume_id", "mount_path", "read_only"}]}`. ' +
          "Your volumes together may take your plan's disk quota.",
        security: BEARER_OR_API_KEY,
        body: Type.Object({
          name: VolumeName,
          size_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_VOLUME_MB / 1024, description: 'Size, GiB' })),
          size_mb: Type.Optional(Type.Integer({ minimum: MIN_VOLUME_MB, maximum: MAX_VOLUME_MB, description: 'Size, MiB' })),
        }),
        response: authedResponses(
          { 201: Type.Ref('VolumeRecord') },
          { 409: 'You have a volume of this name', 429: "Your volumes would exceed your plan's disk quota", 507: 'The server is low on disk space' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const { name, size_gb: sizeGb, size_mb: sizeMb } = request.body;
      if ((sizeGb === undefined) === (sizeMb === undefined)) throw new AppError('BAD_REQUEST', 'give the size as exactly one of size_gb and size_mb');
      const volume = await services.sandbox.volumes.create(principalOf(request), { name, sizeMb: sizeMb ?? sizeGb! * 1024 });
      reply.code(201);
      return toVolumeRecord({ volume, attachments: [] });
    },
  );
}
