/**
 * The admin listener: worker control (GET /workers, drain, undrain, deployment drain) and the Prometheus metrics
 * (GET /metrics) on an address of its own
 * (`SANDBOXD_ADMIN_LISTEN`, 127.0.0.1 on the public port + 1 by default), for callers with the admin token
 * (`Authorization: Bearer …`). The spec says deployment drain is a local control plane that must not be an
 * unauthenticated public write; keeping the whole of worker control off the public listener means a leaked user
 * key can never drain a node, and a firewall rule can keep the port on the operator's network.
 *
 * The token is `SANDBOXD_ADMIN_TOKEN`, or generated at the first start and kept in DATA_DIR/admin-token (0600).
 * Any node's admin listener controls any node of the cluster: drain state lives in the store.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../config/index.ts';
import { splitListenAddress } from '../host/listen-address.ts';
import type { NodeRegistry } from '../core/cluster/node-registry.ts';
import { AppError } from '../core/errors.ts';
import type { VmService } from '../core/vms/index.ts';
import { registerErrorHandling } from './error-handler.ts';
import { DeploymentDrainParams, DeploymentDrainRequest, toWorkerRecord, WorkerParams, WorkerRecord } from './routes/workers/schemas.ts';

export interface AdminListener {
  /** Where it listens (`http://127.0.0.1:PORT`), null when turned off. */
  url: string | null;
  close(): Promise<void>;
}

/** The admin token: from the configuration, else the one kept in the data directory (made on first use). */
export function adminToken(config: Pick<Config['server'], 'adminToken' | 'dataDir'>): string {
  if (config.adminToken) return config.adminToken;
  const file = path.join(config.dataDir, 'admin-token');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = `sbxadm_${randomBytes(32).toString('base64url')}`;
  // `wx`: of two processes starting on one data directory, the second reads the first's token.
  try {
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
}

/** Compares digests, so neither the token's length nor its bytes leak through timing. */
function tokenMatches(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** What `GET /metrics` serves: the Prometheus text exposition (observability/metrics.ts). */
export interface MetricsExposition {
  render(): Promise<{ contentType: string; body: string }>;
}

export async function startAdminListener(
  config: Config['server'],
  nodes: NodeRegistry,
  vms: VmService,
  metrics: MetricsExposition,
  log: FastifyBaseLogger,
): Promise<AdminListener> {
  if (config.adminListen === 'off') return { url: null, close: async () => {} };
  const token = adminToken(config);
  const app = Fastify({ loggerInstance: log.child({ listener: 'admin' }) }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  app.addSchema(WorkerRecord);
  app.addSchema(DeploymentDrainRequest);
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match)
      throw new AppError('NOT_AUTHENTICATED', 'the admin listener needs `Authorization: Bearer <admin token>` (SANDBOXD_ADMIN_TOKEN, or DATA_DIR/admin-token)');
    if (!tokenMatches(match[1]!, token)) throw new AppError('INVALID_CREDENTIALS', 'wrong admin token');
  });

  const self = nodes.nodeId;
  const record = Type.Ref('WorkerRecord');
  app.get('/workers', { schema: { response: { 200: Type.Object({ workers: Type.Array(record) }) } } }, async () => ({
    workers: (await nodes.list()).map((node) => toWorkerRecord(node, self)),
  }));
  app.get('/workers/:worker_id', { schema: { params: WorkerParams, response: { 200: record } } }, async (request) =>
    toWorkerRecord(await nodes.get(request.params.worker_id), self),
  );
  app.post('/workers/:worker_id/drain', { schema: { params: WorkerParams, response: { 200: record } } }, async (request) => {
    const node = await nodes.setDrained(request.params.worker_id, true);
    request.log.info({ node: node.id }, 'node drained: no new VMs are placed on it');
    return toWorkerRecord(node, self);
  });
  app.post('/workers/:worker_id/undrain', { schema: { params: WorkerParams, response: { 200: record } } }, async (request) => {
    const node = await nodes.setDrained(request.params.worker_id, false);
    request.log.info({ node: node.id }, 'node undrained');
    return toWorkerRecord(node, self);
  });
  app.post(
    '/workers/:worker_id/deployment-drain/:action',
    {
      schema: {
        params: DeploymentDrainParams,
        body: Type.Optional(Type.Ref('DeploymentDrainRequest')),
        response: { 200: Type.Intersect([record, Type.Object({ action: Type.String(), running_vms: Type.Integer() })]) },
      },
    },
    async (request) => {
      const { worker_id: id, action } = request.params;
      let node = await nodes.get(id);
      if (action === 'start') {
        node = await nodes.setDeploymentDrain(id, 'draining', true);
        request.log.info({ node: id, reason: (request.body as { reason?: string } | undefined)?.reason }, 'deployment drain started');
      } else if (action === 'cancel') {
        node = await nodes.setDeploymentDrain(id, 'cancelled', false);
      }
      // A deployment drain is done once nothing runs on the node: it can be stopped and upgraded then.
      const running = (await vms.nodeLoad(id)).runningVms;
      if (node.deploymentDrain === 'draining' && running === 0) node = await nodes.setDeploymentDrain(id, 'done', true);
      return { ...toWorkerRecord(node, self), action, running_vms: running };
    },
  );

  // Prometheus scrapes it with the admin token (`authorization: {credentials_file: …}` in its scrape config).
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });

  const listen = splitListenAddress(config.adminListen);
  const host = listen.host;
  await app.listen(listen);
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : listen.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url }, 'admin listener (worker control) is serving');
  return { url, close: () => app.close() };
}
