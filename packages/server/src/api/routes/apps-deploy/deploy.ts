/** POST /v1/apps/deployments: a new app, or the next version of one, from its folder as a gzipped tar. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

const ARCHIVE_TYPES = ['application/gzip', 'application/x-gzip', 'application/x-tar', 'application/octet-stream'];

export function registerDeployApp(app: App, { services, requireAuth }: RouteContext): void {
  void app.register(async (scope) => {
    // The archive is streamed to a temporary file by the core (its own size limit), never parsed here.
    scope.addContentTypeParser(ARCHIVE_TYPES, (_request, _payload, done) => done(null, undefined));
    scope.post(
      '/v1/apps/deployments',
      {
        schema: {
          tags: ['apps'],
          summary: 'Deploy an app from a folder',
          description:
            "The body is the app's folder as a gzipped tar (`tar -czf - -C folder .`, `Content-Type: application/gzip`) with its manifest `sandboxd.yaml` at the root (`sandboxd.yml`, `instavm.yaml`, `instavm.yml` are read too). The archive is checked on the server without being extracted (no absolute path, `..`, device or link leaving the folder) and extracted inside the app's VM into /app. " +
            'A new name creates the app (`app.created`); an existing one gets its next version, which replaces the live one without downtime once it is healthy. Answers 202 at once: follow `GET /v1/apps/{app}/deployments/{version}/logs?follow=true`. ' +
            "The name is the manifest's `name`, else the `name` parameter. The deployment: a VM from the template (or your snapshot with `kind: snapshot`), the archive extracted, `install` run once (non-zero: `failed` with its output in the log), a snapshot of the installed VM (`app-<id>-v<N>`, what restarts and rollbacks start from), `start` as a kept process in /app, the health check through the port until `start_timeout_seconds`, then the switch. " +
            '400 for a bad manifest (the message names the field), 413 past SANDBOXD_APP_UPLOAD_MAX_MB, 404 for an unknown snapshot, template or vault.',
          security: BEARER_OR_API_KEY,
          querystring: Type.Object({
            name: Type.Optional(Type.String({ description: "The app's name when the manifest has none (the command line sends the folder's name)" })),
          }),
          response: authedResponses(
            { 202: Type.Ref('AppDeploymentAccepted') },
            {
              400: 'No manifest, a manifest error (the message names the field), or an archive entry that leaves the folder',
              404: 'The manifest names a snapshot, template or vault that is not yours',
              413: 'The archive is larger than SANDBOXD_APP_UPLOAD_MAX_MB',
              415: 'The body is not application/gzip',
              503: 'secrets or egress need egress enforcement, which this server lacks',
            },
          ),
        },
        onRequest: requireAuth,
      },
      async (request, reply) => {
        const accepted = await services.sandbox.apps.deploy(principalOf(request), request.raw, (request.query as { name?: string }).name);
        return reply.code(202).send(accepted);
      },
    );
  });
}
