/**
 * A trace of one execute against a real server with a real VM, received by an OTLP receiver in this test: the
 * request's span (continuing the caller's `traceparent`), the core's run under it, and the engine's acquisition
 * and the agent's exec under that, the store's statements under the spans that ran them, one trace linked parent to
 * child; the app's close sends what was buffered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('OpenTelemetry traces of an execute', { timeout: 10 * 60_000 }, () => {
  let receiver: OtlpReceiver;
  let server: TestServer | undefined;
  let apiKey: string;

  before(async () => {
    receiver = await startOtlpReceiver();
    server = await startTestServer({ config: { otlpTracesEndpoint: receiver.url } });
    ({ apiKey } = await server.createUserWithKey('traced-user'));
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  test('route → execution.run → engine.acquire and agent.exec, one trace, parent to child', async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const run = await call(server!, 'POST', '/execute', {
      apiKey,
      json: { language: 'bash', command: 'echo traced' },
      headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
    });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.stdout, 'traced\n');
    // Closing the app flushes the exporter's batch.
    await server!.close();
    server = undefined;

    assert.deepEqual(receiver.rejected, []);
    const trace = receiver.spans.filter((span) => span.traceId === callerTrace);
    const named = (name: string): ReceivedSpan => {
      const found = trace.filter((span) => span.name === name);
      assert.equal(found.length, 1, `one ${name} span in the trace: ${JSON.stringify(trace.map((s) => s.name))}`);
      return found[0]!;
    };
    const route = named('POST /execute');
    assert.equal(route.parentSpanId, callerSpan, "the request's span continues the caller's trace");
    assert.equal(route.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(route.serviceName, 'sandboxd');
    assert.equal(route.attributes['http.request.method'], 'POST');
    assert.equal(route.attributes['http.route'], '/execute');
    assert.equal(Number(route.attributes['http.response.status_code']), 200);

    const core = named('execution.run');
    assert.equal(core.parentSpanId, route.spanId);
    assert.equal(core.attributes['sandboxd.execution.language'], 'bash');
    assert.equal(core.attributes['sandboxd.execution.status'], 'completed');

    const acquire = named('engine.acquire');
    assert.equal(acquire.parentSpanId, core.spanId);
    assert.equal(typeof acquire.attributes['sandboxd.vm.from_pool'], 'boolean');

    const exec = named('agent.exec');
    assert.equal(exec.parentSpanId, core.spanId);
    // The store's statements of the request, each under a span of this trace.
    const statements = trace.filter((span) => span.name.startsWith('store '));
    assert.ok(
      statements.some((span) => span.name === 'store insert' && span.parentSpanId === core.spanId),
      'the execution record inserted in the run',
    );
    assert.ok(statements.every((span) => trace.some((parent) => parent.spanId === span.parentSpanId)));
    assert.equal(statements[0]!.attributes['db.system.name'], 'sqlite');
    assert.ok(
      trace.every((span) => span.status.code !== 2),
      `no span failed: ${JSON.stringify(trace.filter((s) => s.status.code === 2))}`,
    );
  });
});
