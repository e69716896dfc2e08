/** Picks the object store the configuration names; the rest of the server sees only {@link ObjectStore}. */
import type { Config } from '../config.ts';
import { LocalObjectStore } from './local-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3ObjectStore } from './s3-object-store.ts';

export type { ObjectStore, StoredObject } from './object-store.ts';
export { deleteObjectsOlderThan } from './retention.ts';

/** The settings an object store is built from (`loadConfig` has checked that `s3` comes with its endpoint and bucket). */
export type ObjectStoreConfig = Pick<
  Config,
  'objectStore' | 'objectStoreDir' | 's3Endpoint' | 's3Region' | 's3Bucket' | 's3Prefix' | 's3AccessKeyId' | 's3SecretAccessKey' | 's3ForcePathStyle'
>;

/** Builds the configured store; nothing is touched on disk or on the network until it is first used. */
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  if (config.objectStore === 'local') return new LocalObjectStore({ rootDir: config.objectStoreDir });
  if (!config.s3Endpoint || !config.s3Bucket) throw new Error('the s3 object store needs SANDBOXD_S3_ENDPOINT and SANDBOXD_S3_BUCKET');
  return new S3ObjectStore({
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    bucket: config.s3Bucket,
    prefix: config.s3Prefix,
    accessKeyId: config.s3AccessKeyId,
    secretAccessKey: config.s3SecretAccessKey,
    forcePathStyle: config.s3ForcePathStyle,
  });
}
