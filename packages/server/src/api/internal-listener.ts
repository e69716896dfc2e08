/**
 * The internal listener: the only one that serves the cluster's internal routes (`/internal/*`: VM starts placed
 * here, browser calls, egress policies, and the agent RPC WebSocket), on an address of its own
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
import { splitListenAddress, type Config } from '../config.ts';
import type { Services } from '../services.ts';
import { registerErrorHandling } from './error-handler.ts';
import { agentRpcUpgradeHandler } from './internal/agent-rpc-upgrade.ts';
import { INTERNAL_BROWSER_SCHEMAS, registerInternalBrowserCallRoute } from './internal/browser-call-route.ts';
import { registerInternalEgressRoute } from './internal/egress-policy-route.ts';
import { signedRequestHooks } from './internal/signed-request.ts';
import { registerInternalVmStartRoute } from './internal/vm-start-route.ts';
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

export async function startInternalListener(config: Config, services: Services, log: FastifyBaseLogger): Promise<InternalListener> {
  if (config.internalListen === 'off') return { url: null, close: async () => {} };
  const app = Fastify({
    loggerInstance: log.child({ listener: 'internal' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    schemaController: partAwareSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  registerRequestLogging(app);
  registerBoundedJsonParser(app);
  for (const schema of INTERNAL_BROWSER_SCHEMAS) app.addSchema(schema);
  // On every request, routes and 404s alike: an unsigned caller learns nothing, not even which paths exist.
  const signed = signedRequestHooks(services.internalAuth, config.bodyLimitBytes);
  app.addHook('onRequest', signed.onRequest);
  app.addHook('preParsing', signed.preParsing);
  registerInternalVmStartRoute(app, services);
  registerInternalBrowserCallRoute(app, services);
  registerInternalEgressRoute(app, services);
  const agentRpc = agentRpcUpgradeHandler(services);
  // A tunnel another node keeps open (a preview's keep-alive connection) would otherwise hold the close.
  app.addHook('preClose', async () => agentRpc.closeAll());
  registerUpgradeRouter(app, [agentRpc]);

  const listen = splitListenAddress(config.internalListen);
  await app.listen(listen);
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : listen.port;
  const url = config.internalUrl || `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${port}`;
  if (config.databaseUrl && isLoopbackHost(listen.host) && !isLoopbackHost(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'))) {
    log.warn({ listen: config.internalListen, url }, 'the internal listener is on loopback but other nodes are told to reach it elsewhere: set SANDBOXD_INTERNAL_LISTEN to this node\u2019s private address (unless a proxy on this machine forwards to it)');
  }
  log.info({ url, listen: `${listen.host}:${port}` }, 'internal listener (cluster traffic) is serving');
  return { url, close: () => app.close() };
}
