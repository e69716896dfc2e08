/**
 * M-3: cluster internal traffic is signed over everything it carries. One real server (the embedded store: a
 * single node serves its internal routes with its own cluster secret, exactly as for the other nodes of a
 * cluster) and one real VM. Each case first sends the genuine request, signed as a node of the cluster signs
 * it, and sees it served; then the forgery a captured request allows — another body, another destination, the
 * same request again, other agent-RPC arguments, the public listener — and sees it refused, and that nothing it
 * asked for happened.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { AGENT_RPC_PATH } from '../../src/cluster/agent-rpc-messages.ts';
import { INTERNAL_COMMANDS_PATH } from '../../src/contract/cluster-commands.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('M-3: cluster internal traffic (signatures, nonces, agent-RPC arguments, the internal listener)', () => {
  let server: TestServer;
  let apiKey: string;
  let principal: Record<string, unknown>;
  let sessionId: string;
  let vmId: string;
  /** Where the other nodes reach this one: the internal listener. */
  let internalBase: string;

  /** Headers a node of the cluster sends: signed with the cluster secret for `destination`, over `body`. */
  function sign(method: string, pathWithQuery: string, body: string, destination = server.config.cluster.nodeId): Record<string, string> {
    return server.services.internalAuth.sign({ method, pathWithQuery, destination, body });
  }

  async function post(base: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: any }> {
    const response = await fetch(base + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  /** The command that reads the VM's egress policy for its owner, as node A sends it to the VM's node. */
  const readPolicy = () => JSON.stringify({ op: 'egress.policy', principal, vm_id: vmId, policy: null });

  /** The VM's egress policy as its owner sees it through the public API. */
  async function policySource(): Promise<string> {
    const answer = await call(server, 'GET', `/v1/vms/${vmId}/egress`, { apiKey });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.source;
  }

  /**
   * One agent-RPC exec over the internal WebSocket: the handshake carries `headers`, the first message is
   * `message`. Answers the exec's result (null if none came), its stdout and the socket's close code.
   */
  function agentExec(headers: Record<string, string>, message: string): Promise<{ result: any; stdout: string; closeCode: number; refusedStatus?: number }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${internalBase.replace(/^http/, 'ws')}${AGENT_RPC_PATH}/${vmId}/exec`, { headers });
      let result: any = null;
      let stdout = '';
      socket.once('open', () => socket.send(message));
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) {
          if (data[0] === 1) stdout += data.subarray(1).toString();
          return;
        }
        const parsed = JSON.parse(data.toString());
        if (parsed.type === 'result' || parsed.type === 'error') result = parsed;
        if (parsed.type === 'result') socket.close();
      });
      socket.once('unexpected-response', (_request, response) => resolve({ result: null, stdout, closeCode: 0, refusedStatus: response.statusCode ?? 0 }));
      socket.once('close', (code) => resolve({ result, stdout, closeCode: code }));
      socket.once('error', reject);
    });
  }

  /** Whether `path` exists in the VM (through the public API). */
  async function existsInVm(path: string): Promise<boolean> {
    const answer = await call(server, 'POST', '/execute', {
      apiKey,
      json: { session_id: sessionId, language: 'bash', command: `test -e ${path} && echo yes || echo no` },
    });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.stdout.trim() === 'yes';
  }

  before(async () => {
    server = await startTestServer();
    internalBase = server.internalUrl!;
    const alice = await server.createUserWithKey('alice', 'pro');
    apiKey = alice.apiKey;
    principal = { userId: alice.userId, username: 'alice', plan: 'pro', isAdmin: false, via: 'api_key', apiKeyId: null };
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1, vm_lifetime_seconds: 300 } });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    const first = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'echo up' } });
    assert.equal(first.status, 200, first.text);
    vmId = first.body.vm_id;
  });
  after(async () => {
    await server?.close();
  });

  test('M-3: a replayed internal request with another body is refused', async () => {
    const headers = sign('POST', INTERNAL_COMMANDS_PATH, readPolicy());
    const genuine = await post(internalBase, INTERNAL_COMMANDS_PATH, headers, readPolicy());
    assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
    assert.equal(genuine.body.source, 'default');
    // The captured headers, with a body that changes the policy instead of reading it.
    const lift = { allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: ['attacker.example'], allowedCidrs: [], allowedPorts: [] };
    const forged = await post(internalBase, INTERNAL_COMMANDS_PATH, headers, JSON.stringify({ op: 'egress.policy', principal, vm_id: vmId, policy: lift }));
    assert.equal(forged.status, 401, JSON.stringify(forged.body));
    assert.equal(forged.body.code, 'INVALID_CREDENTIALS');
    assert.equal(await policySource(), 'default', 'the policy did not change');
  });

  test('M-3: an internal request signed for another node is refused', async () => {
    const genuine = await post(internalBase, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, readPolicy()), readPolicy());
    assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
    const forOther = await post(internalBase, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, readPolicy(), 'node-elsewhere'), readPolicy());
    assert.equal(forOther.status, 401, JSON.stringify(forOther.body));
    assert.equal(forOther.body.code, 'INVALID_CREDENTIALS');
  });

  test('M-3: the same signed request twice is refused (nonce)', async () => {
    const headers = sign('POST', INTERNAL_COMMANDS_PATH, readPolicy());
    const first = await post(internalBase, INTERNAL_COMMANDS_PATH, headers, readPolicy());
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const again = await post(internalBase, INTERNAL_COMMANDS_PATH, headers, readPolicy());
    assert.equal(again.status, 401, JSON.stringify(again.body));
    assert.equal(again.body.code, 'INVALID_CREDENTIALS');
  });

  test("M-3: a signed command still carries only what a user could have sent (the public route's schema and rules)", async () => {
    const command = (argument: unknown) => JSON.stringify({ op: 'browser.call', principal, call: { method: 'scroll', argument } });
    // A scroll with neither a selector nor x/y: the schema lets it through, the public route's rule across fields does not.
    const noTarget = command({ session_id: 'bs-none' });
    const refused = await post(internalBase, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, noTarget), noTarget);
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    const unknownOp = JSON.stringify({ op: 'vm.exec', principal, vm_id: vmId, command: 'touch /root/m3-op' });
    const refusedOp = await post(internalBase, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, unknownOp), unknownOp);
    assert.equal(refusedOp.status, 422, JSON.stringify(refusedOp.body));
  });

  test('M-3: agent RPC arguments other than the signed ones are refused', async () => {
    const path = `${AGENT_RPC_PATH}/${vmId}/exec`;
    const signedArgs = JSON.stringify({ argv: ['/bin/sh', '-c', 'echo genuine-$((40+2))'], stdin: false });
    const genuine = await agentExec(sign('GET', path, signedArgs), signedArgs);
    assert.equal(genuine.result?.type, 'result', JSON.stringify(genuine));
    assert.equal(genuine.result.value.exitCode, 0);
    assert.equal(genuine.stdout.trim(), 'genuine-42');
    // A captured handshake (its signature over the genuine arguments) with a root command of the attacker's.
    const otherArgs = JSON.stringify({ argv: ['/bin/sh', '-c', 'touch /root/m3-pwned; echo forged'], stdin: false });
    const forged = await agentExec(sign('GET', path, signedArgs), otherArgs);
    assert.equal(forged.result, null, `no answer to other arguments: ${JSON.stringify(forged)}`);
    assert.equal(forged.closeCode, 1008);
    assert.equal(await existsInVm('/root/m3-pwned'), false, 'the command did not run');
  });

  test('M-3: internal routes are not served on the public listener', async () => {
    assert.notEqual(internalBase, server.baseUrl);
    const genuine = await post(internalBase, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, readPolicy()), readPolicy());
    assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
    const onPublic = await post(server.baseUrl, INTERNAL_COMMANDS_PATH, sign('POST', INTERNAL_COMMANDS_PATH, readPolicy()), readPolicy());
    assert.equal(onPublic.status, 404, JSON.stringify(onPublic.body));
    // Nor the agent RPC's WebSocket.
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${server.baseUrl.replace(/^http/, 'ws')}${AGENT_RPC_PATH}/${vmId}/exec`, {
        headers: sign('GET', `${AGENT_RPC_PATH}/${vmId}/exec`, 'null'),
      });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => (socket.close(), resolve(101)));
      socket.once('error', () => resolve(-1));
    });
    assert.equal(status, 404);
  });
});
