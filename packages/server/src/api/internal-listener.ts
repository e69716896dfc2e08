/**
 * The internal listener: the only one that serves the cluster's internal routes (`/internal/*`: the one command
 * endpoint, internal/commands/, and the agent RPC's WebSocket), on an address of its own
 * (`SANDBOXD_INTERNAL_LISTEN`, 127.0.0.1 on the public port + 2 by default; in a cluster, this node's address
 * on the private network). The public listener does not know these routes (404), so internal traffic never
 * shares a port with users, and a firewall rule (or a TLS proxy in front) can keep it on the nodes' network.
 *
 * Every request is checked before a route sees it (internal/signed-request.ts): signed with the cluster secret
 * for this node, fresh, never seen before, and the body the one that was signed. Nothing else opens it: no
 * user credential, no admin token.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { splitListenAddress } from '../host/listen-address.ts';
import type { Services } from '../services.ts';
import { registerErrorHandling } from './error-handler.ts';
import { agentRpcUpgradeHandler } from './internal/agent-rpc-upgrade.ts';
import { registerInternalCommands } from './internal/commands/index.ts';
import { signedRequestHooks } from './internal/signed-request.ts';
import { registerBoundedJsonParser } from './json-body.ts';
import { registerRequestLogging } from './request-logging.ts';
import { registerUpgradeRouter } from './upgrade-router.ts';
import { partAwareSchemaController } from './validator-compiler.ts';

/** A host name or address that only this machine reaches. */
function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

export interface InternalListener {
  /** Where the other nodes reach it: SANDBOXD_INTERNAL_URL, else the bound address; null when turned off. */
  url: string | null;
  close(): Promise<void>;
}

/** Serves the cluster's internal routes on a listener of their own (SANDBOXD_INTERNAL_LISTEN), every request signed. */
export async function startInternalListener(services: Services, log: FastifyBaseLogger): Promise<InternalListener> {
  const { cluster, server } = services.config;
  if (cluster.internalListen === 'off') return { url: null, close: async () => {} };
  const app = Fastify({
    loggerInstance: log.child({ listener: 'internal' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: server.bodyLimitBytes,
    schemaController: partAwareSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  registerRequestLogging(app);
  registerBoundedJsonParser(app);
  // On every request, routes and 404s alike: an unsigned caller learns nothing, not even which paths exist.
  const signed = signedRequestHooks(services.internalAuth, server.bodyLimitBytes);
  app.addHook('onRequest', signed.onRequest);
  app.addHook('preParsing', signed.preParsing);
  registerInternalCommands(app, services);
  const agentRpc = agentRpcUpgradeHandler(services);
  // A tunnel another node keeps open (a preview's keep-alive connection) would otherwise hold the close.
  app.addHook('preClose', async () => agentRpc.closeAll());
  registerUpgradeRouter(app, [agentRpc]);

  const listen = splitListenAddress(cluster.internalListen);
  await app.listen(listen);
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : listen.port;
  const url = cluster.internalUrl || `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${port}`;
  if (server.databaseUrl && isLoopbackHost(listen.host) && !isLoopbackHost(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'))) {
    log.warn(
      { listen: cluster.internalListen, url },
      'the internal listener is on loopback but other nodes are told to reach it elsewhere: set SANDBOXD_INTERNAL_LISTEN to this node\u2019s private address (unless a proxy on this machine forwards to it)',
    );
  }
  log.info({ url, listen: `${listen.host}:${port}` }, 'internal listener (cluster traffic) is serving');
  return { url, close: () => app.close() };
}
