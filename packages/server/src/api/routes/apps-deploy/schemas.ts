/** Schemas of app deployments (core/apps): the app and deployment records the API answers with. */
import { Type } from 'typebox';
import { StringEnum } from '../../schemas/common.ts';

export const AppRecord = Type.Object(
  {
    id: Type.String({ description: '`app-` + 12 characters' }),
    name: Type.String({ description: 'Unique among your apps: 1 to 40 lower-case letters, digits and single hyphens' }),
    url: Type.String({
      description:
        'Where the app is served: `<scheme>://<name>--<owner>.<SANDBOXD_APP_DOMAIN>[:port]/` (the owner is your username when it is a DNS label, else `u<user id>`)',
    }),
    status: StringEnum(['deploying', 'live', 'failed', 'crashed', 'stopped'], {
      description: 'deploying: no version live yet; live; failed: its first version failed; crashed: a replica is being restarted',
    }),
    live_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The version the URL serves, null before the first goes live' }),
    latest_version: Type.Integer({ description: 'The newest version deployed (live or not)' }),
    replicas: Type.Integer({ description: 'VMs serving the URL (round robin)' }),
    public: Type.Boolean({ description: "false: only requests with the owner's API key or token are served" }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    custom_domains: Type.Array(
      Type.Object({
        id: Type.String({ description: 'cd_… (see /v1/custom-domains/{domain_id})' }),
        domain: Type.String(),
        url: Type.String({ description: 'Where the domain serves the app once verified' }),
        status: StringEnum(['pending', 'verified'], { description: 'pending: waiting for its DNS TXT record; verified: served' }),
      }),
      { description: 'The custom domains that serve the app (POST /v1/custom-domains with app_id), pending or verified' },
    ),
  },
  { $id: 'AppRecord', title: 'AppRecord' },
);

export const DeploymentRecord = Type.Object(
  {
    app_id: Type.String(),
    version: Type.Integer({ description: '1, 2, … per app' }),
    status: StringEnum(['pending', 'building', 'starting', 'checking', 'live', 'failed', 'superseded', 'stopped'], {
      description:
        'pending (queued behind the app’s previous job), building (VM, upload, install, snapshot), starting (replicas and their start command), checking (health), live, failed, superseded (a later version or a rollback went live), stopped (the app was deleted during it)',
    }),
    manifest: Type.Object({}, { additionalProperties: true, description: 'The manifest as validated: aliases resolved, defaults applied' }),
    vm_ids: Type.Array(Type.String(), { description: 'The VMs of its replicas (the newest ones it ran on)' }),
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    live_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it last went live' }),
    ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'DeploymentRecord', title: 'DeploymentRecord' },
);

export const AppDeploymentAccepted = Type.Object(
  { app: Type.Ref('AppRecord'), deployment: Type.Ref('DeploymentRecord') },
  { $id: 'AppDeploymentAccepted', title: 'AppDeploymentAccepted' },
);

export const AppList = Type.Object({ apps: Type.Array(Type.Ref('AppRecord')) }, { $id: 'AppList', title: 'AppList' });
export const DeploymentList = Type.Object({ deployments: Type.Array(Type.Ref('DeploymentRecord')) }, { $id: 'DeploymentList', title: 'DeploymentList' });

export const APP_DEPLOY_SCHEMAS = [AppRecord, DeploymentRecord, AppDeploymentAccepted, AppList, DeploymentList];

export const AppParams = Type.Object({ app: Type.String({ description: 'The app id (`app-…`) or name' }) });
/** A version number in a path or body: 1, 2, … (bounded like every numeric input: a store integer). */
export const AppVersion = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A version of the app: 1, 2, …' });

export const VersionParams = Type.Object({ app: Type.String({ description: 'The app id or name' }), version: AppVersion });
export const FollowQuery = Type.Object({
  follow: Type.Optional(Type.Boolean({ default: false, description: 'true: keep the answer open and send lines as they come' })),
});
