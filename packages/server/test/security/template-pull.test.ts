/**
 * Security regression (issue 31, M-6): what a template pull's skopeo may connect to. Real skopeo, run the way a
 * build runs it (`withRegistryAccess` → `resolveManifest` → `pullImage`: pinned name, pull user, nftables pull
 * guard), against registries played by small HTTP servers on loopback: one the operator trusts, whose answers
 * redirect to other loopback ports where recorders count every request that reaches them. No VM.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { OciImageError } from '../../src/image/oci/errors.ts';
import { pullImage } from '../../src/image/oci/pull.ts';
import { parseImageReference } from '../../src/image/oci/reference.ts';
import { withRegistryAccess, type RegistryAccessOptions } from '../../src/image/oci/registry-access.ts';
import { resolveManifest } from '../../src/image/oci/resolve.ts';
import { ProgressReporter } from '../../src/image/progress.ts';

const sha256 = (data: Buffer | string) => `sha256:${createHash('sha256').update(data).digest('hex')}`;
const MANIFEST_TYPE = 'application/vnd.oci.image.manifest.v1+json';

/** A one-layer linux/amd64 image: its manifest's bytes and its blobs by digest. */
function tinyImage(marker: string): { manifest: string; blobs: Map<string, Buffer>; layerDigest: string } {
  // An empty tar archive: zero blocks (two at least; each image has a number of its own, so digests differ).
  const tar = Buffer.alloc(512 * (2 + marker.length));
  const layer = gzipSync(tar);
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [sha256(tar)] } }));
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MANIFEST_TYPE,
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha256(layer), size: layer.length }],
    annotations: { marker },
  });
  return {
    manifest,
    blobs: new Map([
      [sha256(config), config],
      [sha256(layer), layer],
    ]),
    layerDigest: sha256(layer),
  };
}

/** An HTTP server on `host` (port 0 = any) that records what reaches it. */
async function listen(host: string, port: number, handle: (request: http.IncomingMessage, response: http.ServerResponse) => void) {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`);
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, hits, port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A registry (distribution API v2, plain HTTP) serving `repositories`; `redirects` send a path elsewhere. */
function registryHandler(repositories: Record<string, ReturnType<typeof tinyImage>>, redirects: Record<string, string>) {
  return (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = request.url ?? '';
    const headers = { 'docker-distribution-api-version': 'registry/2.0' };
    if (redirects[url]) return void response.writeHead(302, { ...headers, location: redirects[url] }).end();
    if (url === '/v2/') return void response.writeHead(200, { ...headers, 'content-type': 'application/json' }).end('{}');
    const match = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url);
    const image = match ? repositories[match[1]!] : undefined;
    if (!match || !image) return void response.writeHead(404, headers).end();
    if (match[2] === 'manifests') {
      const body = Buffer.from(image.manifest);
      return void response
        .writeHead(200, { ...headers, 'content-type': MANIFEST_TYPE, 'content-length': body.length, 'docker-content-digest': sha256(body) })
        .end(request.method === 'HEAD' ? undefined : body);
    }
    const blob = image.blobs.get(decodeURIComponent(match[3]!));
    if (!blob) return void response.writeHead(404, headers).end();
    response
      .writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': blob.length })
      .end(request.method === 'HEAD' ? undefined : blob);
  };
}

describe('security: template pulls (M-6)', () => {
  const good = tinyImage('good');
  const stealer = tinyImage('stealer');
  let scratch: string;
  let recorder: Awaited<ReturnType<typeof listen>>;
  let registry: Awaited<ReturnType<typeof listen>>;
  let pinned: Awaited<ReturnType<typeof listen>>;
  let shadow: Awaited<ReturnType<typeof listen>>;

  /** The resolve step, as a build runs it. */
  const resolve = (reference: string, options: RegistryAccessOptions) => {
    const parsed = parseImageReference(reference);
    return withRegistryAccess(parsed, options, (access) => resolveManifest(parsed, access));
  };
  /** The resolve and pull steps into a cache of this test's. */
  const resolveAndPull = (reference: string, options: RegistryAccessOptions) => {
    const parsed = parseImageReference(reference);
    return withRegistryAccess(parsed, options, async (access) => {
      const { digest } = await resolveManifest(parsed, access);
      return pullImage({
        cacheDir: join(scratch, 'cache'),
        reference: parsed,
        digest,
        access,
        progress: new ProgressReporter(),
        lockTimeoutMs: 60_000,
        onLine: () => undefined,
      });
    });
  };
  const rejection = async (promise: Promise<unknown>): Promise<OciImageError> => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OciImageError, `expected the pull to fail, got ${String(error)}`);
    return error;
  };

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'sandboxd-pull-test-'));
    // Whatever reaches the recorder is an SSRF that got through: it answers like a registry would, to be sure.
    recorder = await listen('127.0.0.1', 0, registryHandler({}, {}));
    const to = (path: string) => `http://127.0.0.1:${recorder.port}${path}`;
    registry = await listen(
      '127.0.0.1',
      0,
      registryHandler(
        { 'good/image': good, 'evil/blob': stealer },
        {
          '/v2/evil/manifest/manifests/latest': to('/internal/admin?from=manifest'),
          [`/v2/evil/blob/blobs/${stealer.layerDigest}`]: to('/internal/admin?from=blob'),
        },
      ),
    );
    // The same port on two loopback addresses: the registry a name was checked at, and what it re-resolves to.
    pinned = await listen('127.0.0.2', 0, registryHandler({ 'good/image': good }, {}));
    shadow = await listen('127.0.0.1', pinned.port, registryHandler({ 'good/image': stealer }, {}));
  });
  after(async () => {
    await Promise.all([recorder, registry, pinned, shadow].map((server) => server?.close()));
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('M-6: a template pull cannot reach loopback or private addresses through a redirect or a re-resolved name', async () => {
    const trusted = { insecureRegistries: [`127.0.0.1:${registry.port}`] };

    // The registry the operator configured (on loopback) works, resolve and pull, through the guard.
    const layout = await resolveAndPull(`127.0.0.1:${registry.port}/good/image:latest`, trusted);
    assert.ok((await readdir(join(layout, 'blobs', 'sha256'))).includes(good.layerDigest.slice(7)), 'the layer was pulled');
    assert.equal((await stat(join(layout, 'index.json'))).uid, 0, 'the cache belongs to root again');

    // Its redirects to another loopback port are refused: the manifest's, and a blob's (where CDNs come in).
    const manifestError = await rejection(resolve(`127.0.0.1:${registry.port}/evil/manifest:latest`, trusted));
    assert.equal(manifestError.step, 'resolve');
    assert.match(manifestError.outputTail.join('\n'), /127\.0\.0\.1:\d+: connect: connection refused/);
    const blobError = await rejection(resolveAndPull(`127.0.0.1:${registry.port}/evil/blob:latest`, trusted));
    assert.equal(blobError.step, 'pull');
    assert.ok(registry.hits.includes(`GET /v2/evil/blob/blobs/${stealer.layerDigest}`), 'the registry was asked for the redirected blob');
    assert.deepEqual(recorder.hits, [], 'nothing reached the redirect target');

    // A name is pinned to the address it was checked at: `localhost` resolves to 127.0.0.1 for everyone else,
    // but was checked (here: resolved by the test's stand-in for DNS) at 127.0.0.2.
    const rebound = await resolve(`localhost:${pinned.port}/good/image:latest`, {
      insecureRegistries: [`localhost:${pinned.port}`],
      resolveHost: async () => ['127.0.0.2'],
    });
    assert.equal(rebound.digest, sha256(good.manifest));
    assert.deepEqual(shadow.hits, [], 'the re-resolved address got nothing');
    assert.ok(pinned.hits.length > 0);

    // A registry the operator did not trust that is, or resolves to, a private address is refused before any tool runs.
    for (const [reference, resolveHost] of [
      [`localhost:${pinned.port}/good/image:latest`, undefined],
      [`registry.example.com:${pinned.port}/good/image:latest`, async () => ['10.20.30.40']],
      ['registry.example.com/good/image:latest', async () => ['169.254.169.254']],
    ] as const) {
      const refused = await rejection(resolve(reference, resolveHost ? { resolveHost } : {}));
      assert.equal(refused.code, 'OCI_REGISTRY_FORBIDDEN', refused.message);
      assert.match(refused.message, /cannot be used: .* is a (loopback|private|link-local|cloud metadata) address/);
    }
    assert.deepEqual(shadow.hits, []);
  });
});
