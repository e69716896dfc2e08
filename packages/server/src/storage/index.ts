/**
 * Picks the object store its options name; the rest of the server sees only {@link ObjectStore}. The options are
 * the configuration's `objects` block (config/objects.ts), which services.ts hands over as it is.
 */
import { LocalObjectStore } from './local-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3ObjectStore } from './s3-object-store.ts';

export type { ListedObject, ObjectStore, StoredObject } from './object-store.ts';
export { deleteObjectsOlderThan } from './retention.ts';

/** What an object store is built from (the configuration has checked that `s3` comes with its endpoint and bucket). */
export interface ObjectStoreOptions {
  objectStore: 'local' | 's3';
  /** The local store's directory. */
  objectStoreDir: string;
  s3Endpoint: string | null;
  s3Region: string;
  s3Bucket: string | null;
  /** Key prefix in the bucket ('' for none). */
  s3Prefix: string;
  /** Both null: the AWS SDK's default credentials. */
  s3AccessKeyId: string | null;
  s3SecretAccessKey: string | null;
  s3ForcePathStyle: boolean;
}

/** Builds the store; nothing is touched on disk or on the network until it is first used. */
export function createObjectStore(options: ObjectStoreOptions): ObjectStore {
  if (options.objectStore === 'local') return new LocalObjectStore({ rootDir: options.objectStoreDir });
  if (!options.s3Endpoint || !options.s3Bucket) throw new Error('the s3 object store needs SANDBOXD_S3_ENDPOINT and SANDBOXD_S3_BUCKET');
  return new S3ObjectStore({
    endpoint: options.s3Endpoint,
    region: options.s3Region,
    bucket: options.s3Bucket,
    prefix: options.s3Prefix,
    accessKeyId: options.s3AccessKeyId,
    secretAccessKey: options.s3SecretAccessKey,
    forcePathStyle: options.s3ForcePathStyle,
  });
}
