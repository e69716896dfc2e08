/** Settings of the object store (screenshots, recordings): local files or an S3-compatible store. */
import path from 'node:path';
import { assertObjectKey } from '../storage/object-validation.ts';
import { booleanFlag, integer, oneOf, text, type Setting, type SettingValues } from './kit.ts';

/** The settings of the objects block, by name (each name is unique across the blocks). */
export const objectsSettings = {
  objectStore: {
    env: 'SANDBOXD_OBJECT_STORE',
    description:
      'Where objects kept outside the database (screenshots) go: local (files under SANDBOXD_OBJECT_STORE_DIR) or s3 (any S3-compatible store, SANDBOXD_S3_*)',
    parse: oneOf<'local' | 's3'>('local', 's3'),
    fallback: (): 'local' | 's3' => 'local',
  },
  objectStoreDir: {
    env: 'SANDBOXD_OBJECT_STORE_DIR',
    description: 'Directory of the local object store (created mode 0700); default <data directory>/objects',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
  },
  s3Endpoint: {
    env: 'SANDBOXD_S3_ENDPOINT',
    description: 'URL of the S3-compatible store (https://s3.eu-west-1.amazonaws.com, http://minio.internal:9000); required with SANDBOXD_OBJECT_STORE=s3',
    parse: (raw: string) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
      return url.toString().replace(/\/$/, '');
    },
    fallback: () => null as string | null,
  },
  s3Region: {
    env: 'SANDBOXD_S3_REGION',
    description: 'Region the S3 requests are signed for (stores without regions take any, often us-east-1 or auto)',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new Error(`expected a region name such as eu-west-1, got "${raw}"`);
      return raw;
    },
    fallback: () => 'us-east-1',
  },
  s3Bucket: {
    env: 'SANDBOXD_S3_BUCKET',
    description: 'Bucket that holds the objects (it must exist); required with SANDBOXD_OBJECT_STORE=s3',
    parse: (raw: string) => {
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw))
        throw new Error(`expected a bucket name of 3-63 lower-case letters, digits, dots and hyphens, got "${raw}"`);
      return raw;
    },
    fallback: () => null as string | null,
  },
  s3Prefix: {
    env: 'SANDBOXD_S3_PREFIX',
    description: 'Key prefix in the bucket, so that several servers or other data can share it (sandboxd/prod keeps keys under sandboxd/prod/); default none',
    parse: (raw: string) => {
      const prefix = raw.replace(/^\/+|\/+$/g, '');
      if (prefix === '') return prefix;
      if (prefix.length > 256) throw new Error(`expected at most 256 characters, got ${prefix.length}`);
      try {
        assertObjectKey(prefix);
      } catch {
        throw new Error(`expected /-separated segments of letters, digits, dots, dashes and underscores, got "${raw}"`);
      }
      return prefix;
    },
    fallback: () => '',
  },
  s3AccessKeyId: {
    env: 'SANDBOXD_S3_ACCESS_KEY_ID',
    description: "Access key id for the S3 store, with SANDBOXD_S3_SECRET_ACCESS_KEY; both unset = the AWS SDK's default credentials (instance role, ~/.aws)",
    parse: text,
    fallback: () => null as string | null,
  },
  s3SecretAccessKey: {
    env: 'SANDBOXD_S3_SECRET_ACCESS_KEY',
    description: 'Secret access key for the S3 store, with SANDBOXD_S3_ACCESS_KEY_ID',
    parse: text,
    fallback: () => null as string | null,
  },
  s3ForcePathStyle: {
    env: 'SANDBOXD_S3_FORCE_PATH_STYLE',
    description:
      'Address the bucket in the path (http://endpoint/bucket/key), as MinIO and most self-hosted stores need; false = as a subdomain (http://bucket.endpoint/key)',
    parse: booleanFlag,
    fallback: () => true,
  },
  artifacts: {
    env: 'SANDBOXD_ARTIFACTS',
    description:
      "Whether paused VMs, users' snapshots and templates go to the object store (any node resumes or starts them; a node's loss loses none): on, off, or auto = on with SANDBOXD_OBJECT_STORE=s3 (a store every node reaches). A local store serves a cluster only when every node's SANDBOXD_OBJECT_STORE_DIR is the same shared directory: then say on. Off keeps them on the node that made them",
    parse: oneOf<'auto' | 'on' | 'off'>('auto', 'on', 'off'),
    fallback: (): 'auto' | 'on' | 'off' => 'auto',
  },
  artifactCacheMb: {
    env: 'SANDBOXD_ARTIFACT_CACHE_MB',
    description:
      "How much of this node's disk its copies of the cluster's paused VMs, snapshots and templates may take (MiB); past it the least recently used copy nothing running needs is removed (the object store keeps it)",
    parse: integer(1024, 100 * 1024 * 1024),
    fallback: () => 20 * 1024,
  },
  artifactGcIntervalSeconds: {
    env: 'SANDBOXD_ARTIFACT_GC_INTERVAL_SECONDS',
    description:
      "How often a node collects the object store's garbage: chunks no paused VM, snapshot or template references any more (0 = never; collection also runs on POST /v1/admin/storage/gc)",
    parse: integer(0, 30 * 86_400),
    fallback: () => 6 * 3600,
  },
  artifactGcGraceSeconds: {
    env: 'SANDBOXD_ARTIFACT_GC_GRACE_SECONDS',
    description:
      'How old an unreferenced chunk must be before garbage collection deletes it: an upload writes its chunks before its manifest, so a young chunk may belong to an upload still under way (keep it above the longest upload; 0 is for tests)',
    parse: integer(0, 30 * 86_400),
    fallback: () => 3600,
  },
} satisfies Record<string, Setting<unknown>>;

/** The objects block of the configuration. */
export type ObjectsConfig = SettingValues<typeof objectsSettings>;
