// test-lane: light (the tracing adapter and a receiver in this process: no server, no VM)
/**
 * The tracing adapter on its own: off, a span is the API's no-op (nothing is sent, nothing throws, the work's value
 * and error pass through); on, nested spans reach an OTLP receiver linked parent to child once the app's shutdown
 * flushes them, a failure with the error status, and the process's tracing is off again after.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { trace } from '@opentelemetry/api';
import { tracesUrlOf } from '../../src/config/observability.ts';
import { loadConfig } from '../../src/config/index.ts';
import { inSpan } from '../../src/observability/spans.ts';
import { startTracing } from '../../src/observability/tracing.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startOtlpReceiver();
});
after(() => receiver.close());

const options = (url: string | null) => ({ url, serviceName: 'sandboxd-test', serviceVersion: '0.0.0', headers: {}, onWarning: () => {} });

test('tracing is off unless an endpoint is configured; the signal endpoint wins over the base one', () => {
  assert.equal(tracesUrlOf(loadConfig({}).observability), null);
  assert.equal(tracesUrlOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).observability), 'http://collector:4318/v1/traces');
  const both = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces' });
  assert.equal(tracesUrlOf(both.observability), 'http://b:4318/v1/traces');
  assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc, x-tenant=7' }).observability.otlpHeaders, {
    authorization: 'Bearer abc',
    'x-tenant': '7',
  });
  assert.equal(loadConfig({}).observability.otelServiceName, 'sandboxd');
  assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x' }), /^ConfigError: OTEL_EXPORTER_OTLP_ENDPOINT: expected an http/);
});

test('off: spans are no-ops, values and errors pass through, nothing is exported', async () => {
  const tracing = await startTracing(options(null));
  assert.equal(tracing.enabled, false);
  assert.equal(await inSpan('outer', {}, async () => inSpan('inner', { childOnly: true }, async () => 42)), 42);
  await assert.rejects(
    inSpan('failing', {}, async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(trace.getActiveSpan(), undefined);
  await tracing.shutdown();
  await sleep(100);
  assert.deepEqual(receiver.spans, []);
});

test('on: nested spans reach the receiver linked, a failure has the error status; shutdown flushes and turns it off', async () => {
  const tracing = await startTracing(options(receiver.url));
  assert.equal(tracing.enabled, true);
  await inSpan('outer', { attributes: { 'test.kind': 'outer' } }, async () => {
    await sleep(5); // across an await: the context follows
    await inSpan('inner', { childOnly: true }, async () => undefined);
    await inSpan('failing', {}, async () => Promise.reject(new Error('boom'))).catch(() => undefined);
  });
  // A child-only span outside any trace is not made.
  await inSpan('orphan', { childOnly: true }, async () => undefined);
  await tracing.shutdown();

  assert.deepEqual(receiver.rejected, []);
  const byName = new Map(receiver.spans.map((span) => [span.name, span]));
  assert.deepEqual([...byName.keys()].sort(), ['failing', 'inner', 'outer']);
  const outer = byName.get('outer')!;
  assert.equal(outer.parentSpanId, '');
  assert.equal(outer.attributes['test.kind'], 'outer');
  assert.equal(outer.serviceName, 'sandboxd-test');
  for (const name of ['inner', 'failing']) {
    assert.equal(byName.get(name)!.traceId, outer.traceId, name);
    assert.equal(byName.get(name)!.parentSpanId, outer.spanId, name);
  }
  assert.equal(byName.get('failing')!.status.code, 2, 'STATUS_CODE_ERROR');
  assert.equal(byName.get('failing')!.status.message, 'boom');

  // Off again: a span now is a no-op.
  const count = receiver.spans.length;
  await inSpan('after', {}, async () => undefined);
  assert.equal(trace.getActiveSpan(), undefined);
  await sleep(100);
  assert.equal(receiver.spans.length, count);
});

test("a request's span names its route and path, never its query, headers or cookies (a share's token, an API key)", async () => {
  const { default: Fastify } = await import('fastify');
  const { registerHttpTracing } = await import('../../src/api/trace-hooks.ts');
  const tracing = await startTracing(options(receiver.url));
  const app = Fastify();
  registerHttpTracing(app);
  app.get('/v1/app/:session/:port/*', async () => ({ ok: true }));
  const before = receiver.spans.length;
  const answer = await app.inject({
    method: 'GET',
    url: '/v1/app/s-1/8000/page?sandboxd_token=share-token-secret',
    headers: { authorization: 'Bearer sbx_sk_header_secret', cookie: 'sandboxd_preview=cookie-secret' },
  });
  assert.equal(answer.statusCode, 200);
  await app.close();
  await tracing.shutdown();
  const spans = receiver.spans.slice(before);
  assert.equal(spans.length, 1);
  assert.equal(spans[0]!.name, 'GET /v1/app/:session/:port/*');
  assert.equal(spans[0]!.attributes['url.path'], '/v1/app/s-1/8000/page');
  const exported = JSON.stringify(spans);
  for (const secret of ['share-token-secret', 'sbx_sk_header_secret', 'cookie-secret']) assert.ok(!exported.includes(secret), secret);
});
