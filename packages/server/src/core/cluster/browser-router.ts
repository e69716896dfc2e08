/**
 * Browser sessions in a cluster: a session's page is a connection held by the process of the node that runs its
 * VM (browser-service.ts), so its interactions and its close must run there. This wraps the local service with
 * the API's interface: a call for an active session recorded on another node goes to that node as a
 * `browser.call` command (contract/cluster-commands.ts: signed for that node, body included, carrying the
 * principal this node authenticated; the owner validates the argument again with the public route's schema) and
 * its answer
 * or error comes back unchanged; everything else (new sessions, lists, renders, usage, credentials: store-backed
 * or node-local by design) is the local service's. The client cannot tell which node answered.
 */
import type { BrowserCall, BrowserCallMethod } from '../../contract/cluster-commands.ts';
import type { Principal } from '../authenticator.ts';
import type { BrowserApi } from '../browser/browser-api.ts';
import type { BrowserService } from '../browser/browser-service.ts';
import type { Database } from '../../store/database.ts';
import { findBrowserSession } from '../../store/browser-store.ts';
import type { Ownership } from './ownership.ts';
import type { RemoteNodes } from './remote-nodes.ts';

type Args<K extends BrowserCallMethod> = BrowserApi[K] extends (principal: Principal, ...rest: infer A) => unknown ? A : never;
type Result<K extends BrowserCallMethod> = Awaited<ReturnType<BrowserApi[K]>>;

export class ClusterBrowserRouter implements BrowserApi {
  constructor(
    private readonly local: BrowserService,
    private readonly database: Database,
    private readonly remote: RemoteNodes,
    private readonly ownership: Ownership,
  ) {}

  /** Runs a session-bound call here when this node holds the session (or nobody active does), else on its node. */
  private async route<K extends BrowserCallMethod>(name: K, principal: Principal, sessionId: string, argument: Args<K>[0]): Promise<Result<K>> {
    const runLocally = () => (this.local[name] as unknown as (p: Principal, a: Args<K>[0]) => Promise<Result<K>>).call(this.local, principal, argument);
    if (this.local.holds(sessionId)) return runLocally();
    const row = typeof sessionId === 'string' && sessionId !== '' ? await findBrowserSession(this.database.db, sessionId) : undefined;
    // Not found, another user's or ended: the local service gives the answer (404s stay 404s).
    if (!row || row.user_id !== principal.userId || row.status !== 'active') return runLocally();
    const call = { method: name, argument } as BrowserCall;
    return this.ownership.onOwner(
      row.node_id,
      runLocally,
      (nodeId) => this.remote.command(nodeId, { op: 'browser.call', principal, call }) as Promise<Result<K>>,
    );
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
