/**
 * The MCP server through the official SDK's client, over both transports, on real VMs: over HTTP (the API
 * server's /mcp, as alice by API key, and by bearer token) and over stdio (`sandbox mcp`, a child process with
 * SANDBOXD_API_KEY). One sandbox of alice's is shared by the cases; both transports act on it.
 * Needs the VM engine (QEMU; KVM when available).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_NAMES, fileUri } from '../src/index.ts';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { BIN, makeHome, type CliHome } from '../../cli/test/run-cli.ts';

/** A connected client over HTTP with the given headers. */
async function httpClient(server: TestServer, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'sandboxd-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

/** All text blocks of a tool result. */
function textOf(result: unknown): string {
  return ((result as CallToolResult).content ?? []).flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

async function call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 180_000,
    ...(onprogress ? { onprogress, resetTimeoutOnProgress: true } : {}),
  })) as CallToolResult;
}

describe('MCP server over HTTP and stdio, on real VMs', () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let home: CliHome;
  let overHttp: Client;
  let overStdio: Client;
  let asBob: Client;
  let stdioStderr = '';
  const stdioErrors: Error[] = [];
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    overHttp = await httpClient(server, { 'x-api-key': alice.apiKey });
    asBob = await httpClient(server, { 'x-api-key': bob.apiKey });
    home = makeHome(server.baseUrl);
    const env = home.env({ SANDBOXD_API_KEY: alice.apiKey }) as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env, cwd: home.home, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => (stdioStderr += chunk.toString()));
    overStdio = new Client({ name: 'sandboxd-test', version: '1.0.0' });
    overStdio.onerror = (error) => stdioErrors.push(error);
    await overStdio.connect(transport);
  });

  after(async () => {
    await Promise.allSettled([overHttp?.close(), asBob?.close(), overStdio?.close()]);
    home?.remove();
    await server?.close();
  });

  test('both transports list the same tools, each with a description and a JSON-schema input', async () => {
    const [http, stdio] = await Promise.all([overHttp.listTools(), overStdio.listTools()]);
    const names = http.tools.map((t) => t.name).sort();
    assert.deepEqual(names, [...TOOL_NAMES].sort());
    assert.deepEqual(stdio.tools.map((t) => t.name).sort(), names);
    for (const tool of http.tools) {
      assert.ok(tool.description && tool.description.length > 20, `${tool.name} has a description`);
      assert.equal(tool.inputSchema.type, 'object', `${tool.name} has an object input schema`);
    }
    const byName = new Map(http.tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.get('run_python')!.inputSchema.required?.sort(), ['code', 'session_id']);
    const action = byName.get('computer_action')!.inputSchema.properties!.action as { enum: string[] };
    assert.ok(action.enum.includes('left_click') && action.enum.includes('screenshot'), "Anthropic's action set");
    assert.ok(byName.get('browser_click')!.inputSchema.properties!.selector, 'browser_click takes a selector');
  });

  test('create_sandbox starts a sandbox and reports progress while it waits', async () => {
    const progress: Progress[] = [];
    const created = await call(overHttp, 'create_sandbox', { vcpus: 1, lifetime_seconds: 900, metadata: { suite: 'mcp' } }, (p) => progress.push(p));
    assert.notEqual(created.isError, true, textOf(created));
    sessionId = (created.structuredContent as { session_id: string }).session_id;
    assert.match(textOf(created), new RegExp(`session_id: ${sessionId}`));
    assert.equal((created.structuredContent as { vm_running: boolean }).vm_running, true, textOf(created));
    assert.ok(progress.length >= 1, 'at least one progress notification');
    const listed = await call(overStdio, 'list_sandboxes', { metadata: { suite: 'mcp' } });
    assert.match(textOf(listed), new RegExp(sessionId));
  });

  test('run_python: print(6*7) gives 42, and state persists across calls and transports', async () => {
    const first = await call(overHttp, 'run_python', { session_id: sessionId, code: 'print(6*7)' });
    assert.notEqual(first.isError, true, textOf(first));
    assert.match(textOf(first), /^Completed: exit code 0/);
    assert.match(textOf(first), /stdout:\n42\n/);
    await call(overHttp, 'run_python', { session_id: sessionId, code: 'answer = 6 * 7' });
    const second = await call(overStdio, 'run_python', { session_id: sessionId, code: 'print(answer + 1)' });
    assert.match(textOf(second), /stdout:\n43\n/, textOf(second));
    const failing = await call(overStdio, 'run_python', { session_id: sessionId, code: 'raise ValueError("boom")' });
    assert.notEqual(failing.isError, true, 'an exception is a result for the model to read, not a tool failure');
    assert.match(textOf(failing), /ValueError: boom/);
    // A value that shows itself as an image (as a matplotlib figure does) comes back as image content.
    const pictured = await call(overHttp, 'run_python', {
      session_id: sessionId,
      code: 'class Dot:\n    def _repr_png_(self): return b"\\x89PNG\\r\\n\\x1a\\n-dot"\nDot()',
    });
    const image = pictured.content.find((part) => part.type === 'image');
    assert.ok(image && image.type === 'image', textOf(pictured));
    assert.equal(image.mimeType, 'image/png');
    assert.equal(Buffer.from(image.data, 'base64').toString('latin1'), '\x89PNG\r\n\x1a\n-dot');
    assert.match(textOf(pictured), /result 1: an image \(image\/png\), attached/);
  });

  test('run_command reports stdout, stderr and a non-zero exit code; long output is cut and says so', async () => {
    const result = await call(overStdio, 'run_command', { session_id: sessionId, command: 'echo out-line; echo err-line >&2; pwd; exit 3' });
    assert.notEqual(result.isError, true, textOf(result));
    const text = textOf(result);
    assert.match(text, /exit code 3/);
    assert.match(text, /stdout:\nout-line\n\/root/);
    assert.match(text, /stderr:\nerr-line/);
    assert.equal((result.structuredContent as { exit_code: number }).exit_code, 3);

    const long = await call(overHttp, 'run_command', { session_id: sessionId, command: 'head -c 60000 /dev/zero | tr "\\0" a; echo; echo THE-END' });
    assert.match(textOf(long), /\[truncated: output was cut to 20000 characters/);
    assert.match(textOf(long), /THE-END/, 'the end of the output is kept');
    assert.equal((long.structuredContent as { truncated: boolean }).truncated, true);
  });

  test('a run longer than its wait goes on, and get_execution returns its output', async () => {
    const started = await call(overHttp, 'run_command', { session_id: sessionId, command: 'sleep 3; echo slept', timeout_seconds: 1 });
    assert.match(textOf(started), /Still running after 1 s \(execution (\d+)/, textOf(started));
    const executionId = (started.structuredContent as { execution_id: number }).execution_id;
    const progress: Progress[] = [];
    const finished = await call(overStdio, 'get_execution', { execution_id: executionId, wait_seconds: 60 }, (p) => progress.push(p));
    assert.match(textOf(finished), /Completed: exit code 0/);
    assert.match(textOf(finished), /slept/);
    assert.ok(progress.length >= 1, 'progress while waiting');
  });

  test('a background process: started, its output read in parts (waiting for more), listed, signalled and stopped', async () => {
    const started = await call(overHttp, 'start_process', {
      session_id: sessionId,
      command: "trap 'echo bye; exit 3' TERM; echo first; while [ ! -e /tmp/next ]; do sleep 0.1; done; echo second; while true; do sleep 0.1; done",
      tag: 'mcp-ticker',
    });
    assert.notEqual(started.isError, true, textOf(started));
    const id = (started.structuredContent as { process_id: string }).process_id;
    const first = await call(overStdio, 'process_output', { session_id: sessionId, process_id: id, wait_seconds: 3 });
    assert.match(textOf(first), /running \(pid \d+\) \[mcp-ticker\]/);
    assert.match(textOf(first), /output:\nfirst\n/);
    const next = (first.structuredContent as { next_after: number }).next_after;
    await call(overHttp, 'run_command', { session_id: sessionId, command: 'touch /tmp/next' });
    const second = await call(overHttp, 'process_output', { session_id: sessionId, process_id: id, after: next, wait_seconds: 30 });
    assert.match(textOf(second), /output:\nsecond\n/, `only what came after: ${textOf(second)}`);
    assert.match(textOf(await call(overHttp, 'list_processes', { session_id: sessionId })), new RegExp(`${id} running`));
    const stopped = await call(overStdio, 'stop_process', { session_id: sessionId, process_id: id, signal: 'SIGTERM' });
    assert.match(textOf(stopped), /Sent SIGTERM/);
    const ended = await call(overHttp, 'process_output', { session_id: sessionId, process_id: id, after: next, wait_seconds: 10 });
    assert.match(textOf(ended), /exited with code 3/, textOf(ended));
    assert.match(textOf(ended), /bye\n/);
    const gone = await call(overHttp, 'stop_process', { session_id: sessionId, process_id: 'proc_0000000000000000' });
    assert.equal(gone.isError, true);
  });

  test('write_file then read_file round-trips, over either transport; list_files shows the file', async () => {
    const content = 'line one\nünïcödé line two\n';
    const written = await call(overHttp, 'write_file', { session_id: sessionId, path: 'mcp-notes/notes.txt', content });
    assert.notEqual(written.isError, true, textOf(written));
    assert.match(textOf(written), /\/root\/mcp-notes\/notes\.txt/);
    const read = await call(overStdio, 'read_file', { session_id: sessionId, path: '/root/mcp-notes/notes.txt' });
    assert.equal(textOf(read), `/root/mcp-notes/notes.txt (${Buffer.byteLength(content)} bytes):\n${content}`);

    const listed = await call(overHttp, 'list_files', { session_id: sessionId, path: '/root/mcp-notes' });
    assert.notEqual(listed.isError, true, textOf(listed));
    assert.match(textOf(listed), new RegExp(`file\\s+${Buffer.byteLength(content)}\\s+\\S+ \\S+\\s+/root/mcp-notes/notes\\.txt`));
    const missing = await call(overHttp, 'list_files', { session_id: sessionId, path: '/root/no-such-dir' });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /NO_SUCH_FILE/);

    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    await call(overHttp, 'write_file', { session_id: sessionId, path: 'dot.png', content: png.toString('base64'), encoding: 'base64' });
    const image = await call(overStdio, 'read_file', { session_id: sessionId, path: 'dot.png' });
    const block = image.content.find((b) => b.type === 'image');
    assert.ok(
      block && block.type === 'image' && block.mimeType === 'image/png' && Buffer.from(block.data, 'base64').equals(png),
      'a PNG comes back as image content',
    );
  });

  test("the sandbox's files are resources: a template, the home directory listed, a file read by URI", async () => {
    const templates = await overHttp.listResourceTemplates();
    assert.deepEqual(
      templates.resourceTemplates.map((t) => t.uriTemplate),
      ['sandbox://{session_id}/files/{+path}'],
    );
    const resources = await overStdio.listResources();
    assert.ok(
      resources.resources.some((r) => r.uri === fileUri(sessionId, '/root', true)),
      JSON.stringify(resources.resources),
    );
    const file = await overStdio.readResource({ uri: fileUri(sessionId, '/root/mcp-notes/notes.txt') });
    assert.deepEqual(file.contents, [{ uri: fileUri(sessionId, '/root/mcp-notes/notes.txt'), mimeType: 'text/plain', text: 'line one\nünïcödé line two\n' }]);
    const directory = await overHttp.readResource({ uri: fileUri(sessionId, '/root/mcp-notes', true) });
    const listing = directory.contents[0]!;
    assert.ok('text' in listing, 'a directory reads as a text listing');
    assert.match(listing.text, /\/root\/mcp-notes\/notes\.txt/);
    await assert.rejects(asBob.readResource({ uri: fileUri(sessionId, '/root/mcp-notes/notes.txt') }), /NOT_FOUND/);
  });

  test("another user's sandbox: a clear tool error with the API's not-found code, never its data", async () => {
    const run = await call(asBob, 'run_python', { session_id: sessionId, code: 'print(answer)' });
    assert.equal(run.isError, true);
    assert.match(textOf(run), /^Error NOT_FOUND \(HTTP 404\): /);
    assert.deepEqual((run.structuredContent as { error: { code: string; status: number } }).error.code, 'NOT_FOUND');
    assert.equal((run.structuredContent as { error: { status: number } }).error.status, 404);
    for (const [name, args] of [
      ['read_file', { session_id: sessionId, path: '/root/mcp-notes/notes.txt' }],
      ['write_file', { session_id: sessionId, path: '/root/bob.txt', content: 'x' }],
      ['get_preview_url', { session_id: sessionId, port: 8000 }],
    ] as const) {
      const result = await call(asBob, name, args);
      assert.equal(result.isError, true, name);
      assert.match(textOf(result), /NOT_FOUND/, `${name}: ${textOf(result)}`);
      assert.doesNotMatch(textOf(result), /ünïcödé/);
    }
    const listed = await call(asBob, 'list_sandboxes', {});
    assert.doesNotMatch(textOf(listed), new RegExp(sessionId));
  });

  test('bad input is a tool error too; the server goes on answering', async () => {
    const bad = await call(overHttp, 'run_python', { session_id: sessionId });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /code/);
    const unknown = await call(overStdio, 'run_python', { session_id: '00000000-0000-4000-8000-000000000000', code: 'print(1)' });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /NOT_FOUND/);
    const still = await call(overStdio, 'run_python', { session_id: sessionId, code: 'print("still here")' });
    assert.match(textOf(still), /still here/);
  });

  test('/mcp: 401 without credentials, a bearer token works, GET answers 405', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'anonymous', version: '1' } },
    };
    const anonymous = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { code: string }).code, 'NOT_AUTHENTICATED');

    const byBearer = await httpClient(server, { authorization: `Bearer ${alice.apiKey}` });
    try {
      const listed = await call(byBearer, 'list_sandboxes', {});
      assert.match(textOf(listed), new RegExp(sessionId));
    } finally {
      await byBearer.close();
    }

    const get = await fetch(`${server.baseUrl}/mcp`, { headers: { 'x-api-key': alice.apiKey, accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal(((await get.json()) as { jsonrpc: string }).jsonrpc, '2.0');

    const notAcceptable = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(initialize),
    });
    assert.equal(notAcceptable.status, 406);
  });

  test('computer use on a desktop sandbox: screenshots come back as MCP image content', async () => {
    const created = await call(overStdio, 'create_sandbox', { template: 'desktop', lifetime_seconds: 300 });
    assert.notEqual(created.isError, true, textOf(created));
    const desktop = (created.structuredContent as { session_id: string }).session_id;
    try {
      const shot = await call(overHttp, 'computer_screenshot', { session_id: desktop, scale: 0.5 });
      assert.notEqual(shot.isError, true, textOf(shot));
      const image = shot.content.find((b) => b.type === 'image');
      assert.ok(image && image.type === 'image' && image.mimeType === 'image/png', 'an image block');
      const png = Buffer.from(image.data, 'base64');
      assert.equal(png.toString('latin1', 1, 4), 'PNG');
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [640, 400], 'the default 1280×800 screen at half scale');
      assert.match(textOf(shot), /640×400 pixels/);
      const moved = await call(overStdio, 'computer_action', { session_id: desktop, action: 'mouse_move', coordinate: [200, 150] });
      assert.match(textOf(moved), /^mouse_move done in \d+ ms/);
      const where = await call(overStdio, 'computer_action', { session_id: desktop, action: 'cursor_position' });
      assert.deepEqual((where.structuredContent as { cursor: unknown }).cursor, { x: 200, y: 150 });
      const action = await call(overStdio, 'computer_action', { session_id: desktop, action: 'screenshot' });
      assert.ok(
        action.content.some((b) => b.type === 'image' && b.mimeType === 'image/png'),
        'the screenshot action is an image too',
      );
      const notDesktop = await call(overHttp, 'computer_screenshot', { session_id: sessionId });
      assert.equal(notDesktop.isError, true);
      assert.match(textOf(notDesktop), /^Error CONFLICT \(HTTP 409\): .*not a desktop session/);
    } finally {
      await call(overHttp, 'kill_sandbox', { session_id: desktop });
    }
  });

  test('the browser tools drive a real Chromium in its VM: open, type, click, read, screenshot, close', async () => {
    const page = `data:text/html,${encodeURIComponent(
      '<title>MCP form</title><input id="name"><button id="go" onclick="document.getElementById(\'out\').textContent = \'hello \' + document.getElementById(\'name\').value">Greet</button><p id="out">nobody yet</p>',
    )}`;
    const opened = await call(overHttp, 'browser_open', { url: page, viewport_width: 800, viewport_height: 600 });
    assert.notEqual(opened.isError, true, textOf(opened));
    const browserSessionId = (opened.structuredContent as { browser_session_id: string }).browser_session_id;
    try {
      assert.match(textOf(opened), /MCP form/);
      const typed = await call(overStdio, 'browser_type', { browser_session_id: browserSessionId, selector: '#name', text: 'agent' });
      assert.notEqual(typed.isError, true, textOf(typed));
      const clicked = await call(overStdio, 'browser_click', { browser_session_id: browserSessionId, selector: '#go' });
      assert.notEqual(clicked.isError, true, textOf(clicked));
      const content = await call(overHttp, 'browser_content', { browser_session_id: browserSessionId });
      assert.match(textOf(content), /hello agent/);
      assert.match(textOf(content), /#go/, 'the button is listed with its selector');
      const shot = await call(overHttp, 'browser_screenshot', { browser_session_id: browserSessionId });
      const image = shot.content.find((block) => block.type === 'image');
      assert.ok(image && image.type === 'image', textOf(shot));
      const png = Buffer.from(image.data, 'base64');
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [800, 600], 'the viewport asked for');
      const missing = await call(overHttp, 'browser_click', { browser_session_id: browserSessionId, selector: '#nowhere', timeout_ms: 500 });
      assert.equal(missing.isError, true);
      assert.match(textOf(missing), /ELEMENT_NOT_FOUND/);
    } finally {
      const closed = await call(overHttp, 'browser_close', { browser_session_id: browserSessionId });
      assert.match(textOf(closed), /Closed browser session/);
    }
  });

  test('kill_sandbox kills the VM; the stdio server wrote nothing but JSON-RPC to stdout', async () => {
    const killed = await call(overStdio, 'kill_sandbox', { session_id: sessionId });
    assert.notEqual(killed.isError, true, textOf(killed));
    const listed = await call(overHttp, 'list_sandboxes', { metadata: { suite: 'mcp' } });
    assert.doesNotMatch(textOf(listed), new RegExp(`${sessionId}\\s+active`));
    assert.deepEqual(
      stdioErrors.map((e) => e.message),
      [],
    );
    assert.match(stdioStderr, /sandbox mcp: serving http:\/\/127\.0\.0\.1:\d+ over stdio \(API key from SANDBOXD_API_KEY\)/);
  });
});
