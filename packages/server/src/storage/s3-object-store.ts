/**
 * Objects in any S3-compatible store (AWS S3, MinIO, Ceph RGW, Cloudflare R2, …) through the AWS SDK v3. Each
 * key is stored under `<prefix>/` in the bucket; the content type is the object's own Content-Type and
 * LastModified is the store's. S3 replaces an object whole on PUT, so readers never see a part of one.
 */
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { keysOlderThan, type ListedObject, type ObjectStore, type StoredObject } from './object-store.ts';
import { assertContentType, assertObjectKey, assertObjectPrefix } from './object-validation.ts';

export interface S3ObjectStoreOptions {
  /** e.g. `https://s3.eu-west-1.amazonaws.com` or `http://minio.internal:9000`. */
  endpoint: string;
  region: string;
  bucket: string;
  /** Keys are stored under `<prefix>/`; empty = at the bucket's root. */
  prefix: string;
  /** Both or neither; neither = the AWS SDK's default credential chain (instance role, shared files). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  /** `http://endpoint/bucket/key` rather than `http://bucket.endpoint/key` (MinIO and most self-hosted stores). */
  forcePathStyle: boolean;
  /** Longest wait for a connection, ms (default 5000). */
  connectionTimeoutMs?: number;
  /** Longest wait for the answer to one request once sent, ms (default 60000). */
  requestTimeoutMs?: number;
  /** Keys asked for per ListObjectsV2 page (default 1000, S3's most). */
  listPageSize?: number;
}

/** The S3 implementation of {@link ObjectStore}. */
export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  /** `""` or `"a/b/"`. */
  readonly #prefix: string;
  readonly #listPageSize: number;

  constructor(options: S3ObjectStoreOptions) {
    const prefix = options.prefix.replace(/^\/+|\/+$/g, '');
    assertObjectPrefix(prefix);
    if ((options.accessKeyId === null) !== (options.secretAccessKey === null))
      throw new Error('S3 object store: give both an access key id and a secret access key, or neither');
    this.#bucket = options.bucket;
    this.#prefix = prefix === '' ? '' : `${prefix}/`;
    this.#listPageSize = options.listPageSize ?? 1000;
    this.description = `s3://${options.bucket}/${this.#prefix} at ${options.endpoint}`;
    this.#client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.accessKeyId !== null && options.secretAccessKey !== null
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // The SDK's default (CRC32 checksums on every upload, checked on every download) is refused or mishandled
      // by several S3-compatible stores; S3 itself checks the body's signature either way.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 5000, requestTimeout: options.requestTimeoutMs ?? 60_000 },
    });
  }

  async put(key: string, body: Buffer, options: { contentType: string }): Promise<void> {
    assertObjectKey(key);
    assertContentType(options.contentType);
    await this.#send('PutObject', key, () =>
      this.#client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key, Body: body, ContentLength: body.length, ContentType: options.contentType }),
      ),
    );
  }

  async get(key: string): Promise<(StoredObject & { body: Buffer }) | null> {
    const found = await this.#getObject(key);
    if (!found) return null;
    const bytes = await found.output.Body!.transformToByteArray();
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return { ...found.object, size: body.length, body };
  }

  async getStream(key: string): Promise<(StoredObject & { stream: Readable }) | null> {
    const found = await this.#getObject(key);
    if (!found) return null;
    const stream = found.output.Body;
    // Under Node the SDK hands back the response itself, an http.IncomingMessage.
    if (!(stream instanceof Readable)) throw new Error(`S3 GetObject ${key}: the body is not a Node stream`);
    return { ...found.object, stream };
  }

  async delete(key: string): Promise<void> {
    assertObjectKey(key);
    // S3 answers 204 whether or not the key existed.
    await this.#send('DeleteObject', key, () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key })));
  }

  async head(key: string): Promise<{ size: number; lastModified: Date } | null> {
    assertObjectKey(key);
    return this.#send('HeadObject', key, async () => {
      try {
        const output = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
        return { size: output.ContentLength ?? 0, lastModified: output.LastModified ?? new Date(0) };
      } catch (error) {
        // A HEAD answer has no body, so a missing key and a missing bucket are both a bare 404 (NotFound): the
        // bucket's absence shows at the next put or get.
        const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
        if (name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404) return null;
        throw error;
      }
    });
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertObjectPrefix(prefix);
    let continuationToken: string | undefined;
    for (;;) {
      const page = await this.#send('ListObjectsV2', prefix, () =>
        this.#client.send(
          new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix + prefix, MaxKeys: this.#listPageSize, ContinuationToken: continuationToken }),
        ),
      );
      for (const item of page.Contents ?? []) {
        if (!item.Key) continue;
        const key = item.Key.slice(this.#prefix.length);
        // Whatever else shares the bucket and prefix is not ours to return (nor could it be passed to delete).
        try {
          assertObjectKey(key);
        } catch {
          continue;
        }
        yield { key, size: item.Size ?? 0, lastModified: item.LastModified ?? new Date(0) };
      }
      if (!page.IsTruncated || !page.NextContinuationToken) return;
      continuationToken = page.NextContinuationToken;
    }
  }

  async listOlderThan(prefix: string, before: Date, limit: number): Promise<string[]> {
    assertObjectPrefix(prefix);
    return keysOlderThan(this.list(prefix), before, limit);
  }

  /** Closes the client's idle connections; the store cannot be used after. */
  destroy(): void {
    this.#client.destroy();
  }

  async #getObject(key: string): Promise<{ output: GetObjectCommandOutput; object: StoredObject } | null> {
    assertObjectKey(key);
    const output = await this.#send('GetObject', key, async () => {
      try {
        return await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
      } catch (error) {
        // A missing key is an answer; a missing bucket (also 404) is a misconfiguration and stays an error.
        const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
        if (name === 'NoSuchKey' || ($metadata?.httpStatusCode === 404 && name !== 'NoSuchBucket')) return null;
        throw error;
      }
    });
    if (!output) return null;
    return {
      output,
      object: {
        contentType: output.ContentType ?? 'application/octet-stream',
        size: output.ContentLength ?? 0,
        lastModified: output.LastModified ?? new Date(0),
      },
    };
  }

  /** Runs one request; its error names the operation, the key and the store. */
  async #send<T>(operation: string, key: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      const { name, message } = error as Error;
      throw new Error(`S3 ${operation} ${JSON.stringify(key)} on ${this.description}: ${name}: ${message}`, { cause: error });
    }
  }
}
