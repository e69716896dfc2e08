/**
 * Image references are checked and normalised before any tool sees them: Docker's short forms, registries with
 * ports, digests, and everything that is not a reference (which must never reach skopeo as an option or a
 * transport) refused at the `resolve` step.
 */
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { OciImageError, parseImageReference } from '../../src/image/oci/index.ts';

const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('OCI image references', () => {
  test('normalise like Docker: Hub paths, library images, the latest tag', () => {
    assert.equal(parseImageReference('alpine').canonical, 'docker.io/library/alpine:latest');
    assert.equal(parseImageReference('python:3.12-slim').canonical, 'docker.io/library/python:3.12-slim');
    assert.equal(parseImageReference('bitnami/redis').canonical, 'docker.io/bitnami/redis:latest');
    assert.equal(parseImageReference('ghcr.io/owner/app/worker:v1.2').canonical, 'ghcr.io/owner/app/worker:v1.2');
    assert.deepEqual(parseImageReference('127.0.0.1:5000/test/bb:v1'), {
      registry: '127.0.0.1:5000',
      repository: 'test/bb',
      tag: 'v1',
      canonical: '127.0.0.1:5000/test/bb:v1',
    });
    assert.equal(parseImageReference('localhost/app').registry, 'localhost');
    assert.equal(parseImageReference('localhost:5000/app').canonical, 'localhost:5000/app:latest');
  });

  test('keep a pinned digest, with or without a tag', () => {
    assert.deepEqual(parseImageReference(`registry.example.com/app@${DIGEST}`), {
      registry: 'registry.example.com',
      repository: 'app',
      digest: DIGEST,
      canonical: `registry.example.com/app@${DIGEST}`,
    });
    assert.equal(parseImageReference(`app:1@${DIGEST}`).canonical, `docker.io/library/app:1@${DIGEST}`);
  });

  test('refuse what is not a reference, at the resolve step, saying why', () => {
    const bad: [string, RegExp][] = [
      ['', /empty/],
      ['docker://alpine', /without a scheme/],
      ['--authfile=/etc/shadow', /repository path component/],
      ['Alpine', /repository path component/],
      ['alpine:', /tag/],
      ['alpine:-x', /tag/],
      ['a//b', /empty path component/],
      ['app@sha256:abc', /digest/],
      ['reg.example.com:99x/app', /registry/],
      ['two words', /white space/],
      [`a/${'b'.repeat(300)}`, /longer than/],
    ];
    for (const [input, why] of bad) {
      assert.throws(
        () => parseImageReference(input),
        (error: unknown) => {
          assert.ok(error instanceof OciImageError, `${input}: ${String(error)}`);
          assert.equal(error.code, 'OCI_REFERENCE_INVALID');
          assert.equal(error.step, 'resolve');
          assert.match(error.message, why, input);
          return true;
        },
      );
    }
  });
});
