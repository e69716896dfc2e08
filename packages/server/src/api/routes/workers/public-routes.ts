/**
 * Worker control on the public listener: documented (the spec lists these operations) and refused with 403,
 * for everyone. The spec says they must not be an unauthenticated public write, and they are not a user's
 * business either: they are served on the admin listener (`SANDBOXD_ADMIN_LISTEN`, loopback by default) to
 * callers with the admin token (admin-listener.ts).
 */
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import { AnyObject, publicResponses } from '../../schemas/common.ts';
import type { App } from '../../types.ts';
import { DeploymentDrainParams, WorkerParams } from './schemas.ts';

const ELSEWHERE =
  'Served on the admin listener only (SANDBOXD_ADMIN_LISTEN, default 127.0.0.1 on the public port + 1, with `Authorization: Bearer <admin token>`); the public listener answers 403.';

function refuse(): never {
  throw new AppError('FORBIDDEN', 'worker control is served on the admin listener only (SANDBOXD_ADMIN_LISTEN, loopback by default), with the admin token');
}

export function registerPublicWorkerRoutes(app: App): void {
  const responses = publicResponses({ 200: AnyObject }, { 403: 'Always on this listener: use the admin listener' });
  // Refused before the body is read or validated: nothing about these requests is this listener's business.
  const onRequest = async () => refuse();
  app.post(
    '/workers/:worker_id/drain',
    { schema: { tags: ['system'], summary: 'Put a worker node in drain mode', description: ELSEWHERE, params: WorkerParams, response: responses }, onRequest },
    refuse,
  );
  app.post(
    '/workers/:worker_id/undrain',
    {
      schema: { tags: ['system'], summary: 'Take a worker node out of drain mode', description: ELSEWHERE, params: WorkerParams, response: responses },
      onRequest,
    },
    refuse,
  );
  app.post(
    '/workers/:worker_id/deployment-drain/:action',
    {
      schema: {
        tags: ['system'],
        summary: 'Deployment drain control (local control plane)',
        description: ELSEWHERE,
        params: DeploymentDrainParams,
        body: Type.Ref('DeploymentDrainRequest'),
        response: responses,
      },
      onRequest,
    },
    refuse,
  );
}
