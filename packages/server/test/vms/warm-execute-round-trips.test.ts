/**
 * The store round trips of a warm execute (issue 32): a sync `POST /execute` of a bash command in a session whose
 * VM is running on this node, against a real VM. Every statement the store runs on behalf of that one request is
 * collected (Kysely's log sees each statement a connection runs; the request's own async context tells its
 * statements from the server's background work: webhook polls, the egress log, heartbeats), and printed.
 *
 * What is bounded: the statements of the execute itself, once authenticated, transaction control aside (on SQLite a
 * statement is a call into the library; on PostgreSQL each one, BEGIN and COMMIT too, is a network round trip).
 * Listed apart: the authentication's reads of the API key and its user, BEGIN/COMMIT, and the outbox delivery pass
 * that the execution's committed event wakes (it reads and marks events, finds webhook endpoints and due
 * deliveries; it runs in the request's context, but is the dispatcher's work, done the same for any event).
 * Before the VM service resolved the session's VM once, the execute itself made 13 (issue 32).
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

/** The statements of one request, in order. */
interface RequestQueries {
  statements: string[];
}

/** At most this many statements for the execute itself (issue 32: about 13 before the VM service was split). */
const MAX_EXECUTE_STATEMENTS = 5;

describe('warm execute: store round trips', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-round-trips-'));
  const requests = new AsyncLocalStorage<RequestQueries>();
  let database: Database;
  let server: TestServer;
  let apiKey: string;
  let sessionId: string;
  /** The contexts of the requests counted so far. */
  const counted: RequestQueries[] = [];

  before(async () => {
    database = await openDatabase({
      dataDir,
      databaseUrl: null,
      onQuery: (query) => requests.getStore()?.statements.push(query.sql),
    });
    server = await startTestServer({ dataDir, database });
    // Each request to count gets a context of its own before Fastify sees it: what it awaits inherits it.
    server.app.server.prependListener('request', (request: { headers: Record<string, unknown> }) => {
      if (request.headers['x-count-queries'] !== '1') return;
      const context = { statements: [] };
      counted.push(context);
      requests.enterWith(context);
    });
    ({ apiKey } = await server.createUserWithKey('round-trips', 'pro'));
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: {} });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    // The first execute starts the session's VM; the one counted below finds it running.
    const cold = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'echo cold' } });
    assert.equal(cold.status, 200, cold.text);
    assert.equal(cold.body.stdout, 'cold\n');
  });
  after(async () => {
    await server?.close();
    await database?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A warm execute whose statements are collected. */
  const countedExecute = async (command: string): Promise<{ body: any; statements: string[] }> => {
    const before = counted.length;
    const res = await call(server, 'POST', '/execute', {
      apiKey,
      headers: { 'x-count-queries': '1' },
      json: { session_id: sessionId, language: 'bash', command },
    });
    assert.equal(res.status, 200, res.text);
    // Work the request left running (a fire-and-forget write) is part of it: give it a moment to land.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(counted.length, before + 1, 'one counted request');
    return { body: res.body, statements: counted.at(-1)!.statements };
  };

  test(`a warm sync execute (bash) makes at most ${MAX_EXECUTE_STATEMENTS} store statements besides authentication`, async () => {
    const { body, statements } = await countedExecute('echo warm');
    assert.equal(body.stdout, 'warm\n');
    const kinds = statements.map(kindOf);
    const count = (kind: StatementKind) => kinds.filter((k) => k === kind).length;
    const execute = count('execute');
    const listing = statements.map((sql, i) => `  ${String(i + 1).padStart(2)}. ${kinds[i] === 'execute' ? '' : `(${kinds[i]}) `}${sql}`).join('\n');
    console.log(
      `warm execute: ${statements.length} statements: ${execute} of the execute, ${count('authentication')} authentication, ` +
        `${count('transaction')} transaction control, ${count('delivery')} outbox delivery\n${listing}`,
    );
    assert.ok(execute <= MAX_EXECUTE_STATEMENTS, `a warm execute made ${execute} store statements (at most ${MAX_EXECUTE_STATEMENTS}):\n${listing}`);
  });
});

type StatementKind = 'execute' | 'authentication' | 'transaction' | 'delivery';

/** What a statement of the request is part of (see the module comment). */
function kindOf(sql: string): StatementKind {
  if (/^(begin|commit|rollback|start transaction)\b/i.test(sql.trim())) return 'transaction';
  if (/from "api_keys"|update "api_keys"|from "users" where "id"/i.test(sql)) return 'authentication';
  if (/"webhook_|"dispatched_at" is null/i.test(sql)) return 'delivery';
  return 'execute';
}
