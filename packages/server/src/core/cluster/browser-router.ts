/**
 * Browser sessions in a cluster: a session's page is a connection held by the process of the node that runs its
 * VM (browser-service.ts), so its interactions and its close must run there. This wraps the local service with
 * the API's interface: a call for an active session recorded on another node goes to that node's internal
 * browser route (signed with the cluster secret for that node, body included, carrying the principal this node
 * authenticated; the owner validates the arguments again with the public route's schema) and its answer
 * or error comes back unchanged; everything else (new sessions, lists, renders, usage, credentials: store-backed
 * or node-local by design) is the local service's. The client cannot tell which node answered.
 */
import type { Principal } from '../authenticator.ts';
import type { BrowserApi } from '../browser/browser-api.ts';
import type { BrowserService } from '../browser/browser-service.ts';
import type { Database } from '../../store/database.ts';
import { findBrowserSession } from '../../store/browser-store.ts';
import type { RemoteNodes } from './remote-nodes.ts';

/** Where another node runs a browser call for a session it holds: `${REMOTE_BROWSER_PATH}/{call}` (internal listener). */
export const REMOTE_BROWSER_PATH = '/internal/v1/browser/call';

/** The calls bound to one session's page, by the name of the service's method. */
export const SESSION_BOUND_CALLS = ['closeSession', 'navigate', 'click', 'type', 'fill', 'scroll', 'wait', 'hover', 'keypress', 'screenshot', 'extract', 'content', 'fillCredential'] as const;
export type SessionBoundCall = (typeof SESSION_BOUND_CALLS)[number];

/** Longest a forwarded call may take: the longest interaction timeout the API accepts, plus the queue ahead of it. */
const REMOTE_CALL_TIMEOUT_MS = 300_000;

type Args<K extends SessionBoundCall> = BrowserApi[K] extends (principal: Principal, ...rest: infer A) => unknown ? A : never;
type Result<K extends SessionBoundCall> = Awaited<ReturnType<BrowserApi[K]>>;

export class ClusterBrowserRouter implements BrowserApi {
  constructor(
    private readonly local: BrowserService,
    private readonly database: Database,
    private readonly remote: RemoteNodes,
    private readonly nodeId: string,
  ) {}

  /** Runs a session-bound call here when this node holds the session (or nobody active does), else on its node. */
  private async route<K extends SessionBoundCall>(name: K, principal: Principal, sessionId: string, ...args: Args<K>): Promise<Result<K>> {
    const runLocally = () => (this.local[name] as unknown as (p: Principal, ...a: Args<K>) => Promise<Result<K>>).call(this.local, principal, ...args);
    if (this.local.holds(sessionId)) return runLocally();
    const row = typeof sessionId === 'string' && sessionId !== '' ? await findBrowserSession(this.database.db, sessionId) : undefined;
    // Not found, another user's, ended or here: the local service gives the answer (404s stay 404s).
    if (!row || row.user_id !== principal.userId || row.status !== 'active' || row.node_id === this.nodeId) return runLocally();
    return this.remote.post<Result<K>>(row.node_id, `${REMOTE_BROWSER_PATH}/${name}`, { principal, args }, REMOTE_CALL_TIMEOUT_MS, `browser session ${sessionId} runs on`);
  }

  closeSession(principal: Principal, sessionId: string) {
    return this.route('closeSession', principal, sessionId, sessionId);
  }
  navigate(principal: Principal, request: Args<'navigate'>[0]) {
    return this.route('navigate', principal, request.session_id, request);
  }
  click(principal: Principal, request: Args<'click'>[0]) {
    return this.route('click', principal, request.session_id, request);
  }
  type(principal: Principal, request: Args<'type'>[0]) {
    return this.route('type', principal, request.session_id, request);
  }
  fill(principal: Principal, request: Args<'fill'>[0]) {
    return this.route('fill', principal, request.session_id, request);
  }
  scroll(principal: Principal, request: Args<'scroll'>[0]) {
    return this.route('scroll', principal, request.session_id, request);
  }
  wait(principal: Principal, request: Args<'wait'>[0]) {
    return this.route('wait', principal, request.session_id, request);
  }
  hover(principal: Principal, request: Args<'hover'>[0]) {
    return this.route('hover', principal, request.session_id, request);
  }
  keypress(principal: Principal, request: Args<'keypress'>[0]) {
    return this.route('keypress', principal, request.session_id, request);
  }
  screenshot(principal: Principal, request: Args<'screenshot'>[0]) {
    return this.route('screenshot', principal, request.session_id, request);
  }
  extract(principal: Principal, request: Args<'extract'>[0]) {
    return this.route('extract', principal, request.session_id, request);
  }
  content(principal: Principal, request: Args<'content'>[0]) {
    return this.route('content', principal, request.session_id, request);
  }
  fillCredential(principal: Principal, request: Args<'fillCredential'>[0]) {
    return this.route('fillCredential', principal, request.session_id, request);
  }

  // Not bound to a page held by one node: the store answers, or the session/render starts here.
  createSession: BrowserApi['createSession'] = (...a) => this.local.createSession(...a);
  listSessions: BrowserApi['listSessions'] = (...a) => this.local.listSessions(...a);
  getSession: BrowserApi['getSession'] = (...a) => this.local.getSession(...a);
  capabilities: BrowserApi['capabilities'] = (...a) => this.local.capabilities(...a);
  render: BrowserApi['render'] = (...a) => this.local.render(...a);
  usage: BrowserApi['usage'] = (...a) => this.local.usage(...a);
  usageHistory: BrowserApi['usageHistory'] = (...a) => this.local.usageHistory(...a);
  storedScreenshot: BrowserApi['storedScreenshot'] = (...a) => this.local.storedScreenshot(...a);
  authTest: BrowserApi['authTest'] = (...a) => this.local.authTest(...a);
  createCredential: BrowserApi['createCredential'] = (...a) => this.local.createCredential(...a);
  listCredentials: BrowserApi['listCredentials'] = (...a) => this.local.listCredentials(...a);
  getCredential: BrowserApi['getCredential'] = (...a) => this.local.getCredential(...a);
  updateCredential: BrowserApi['updateCredential'] = (...a) => this.local.updateCredential(...a);
  deleteCredential: BrowserApi['deleteCredential'] = (...a) => this.local.deleteCredential(...a);
}
