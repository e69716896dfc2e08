/**
 * `AbortSignal` on every call of the client, against a local node:http server that never answers (but for the two
 * records the waits poll, which answer "not yet"). `CALLS` names every method that sends a request, each called with
 * `{ signal }`: the type check (`tsc`) fails for a method that does not take it, and a test fails for a method of the
 * client, of its resources or of the objects they hand out (Session, BrowserSession, Desktop, CommandHandle…) that is
 * missing from the list. For each: a signal aborted already rejects with its reason and sends nothing; one aborted
 * while the request is out rejects with its reason within a second, the connection is closed, and nothing is sent again
 * (retries are on, 1 ms apart). Waits stop polling when aborted; a process run abandoned before its answer is killed
 * once the answer names it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { AsyncExecution, CommandHandle, Sandboxd, type ProcessInfo, type WebSocketConstructor } from '../src/index.ts';

/** A method called with a signal: a promise (or a paged list), or an async iterator (a stream of events). */
type Call = (signal: AbortSignal) => PromiseLike<unknown> | AsyncIterable<unknown>;

/**
 * The longest an aborted call may take to reject. The server never answers, so any rejection with the signal's reason
 * is the abort's doing; the bound catches a call that looks at its signal only after a wait (the waits below poll every 60 s). It is
 * not tighter because the light lane runs beside a VM on two cores: CI once saw 330 ms for a call that waits on nothing.
 */
const PROMPT_MS = 1000;

/** Never built: `terminals.attach` is stopped at its first request, before it opens a WebSocket. */
const NoWebSocket = class {
  constructor() {
    throw new Error('no WebSocket is opened in this test');
  }
} as unknown as WebSocketConstructor;

const runningProcess = { process_id: 'proc_1', session_id: 's-1', pid: 42, status: 'running' } as ProcessInfo;

/** Every method that sends a request, by `<object>.<method>`, called with `{ signal }` as it takes it. */
function calls(client: Sandboxd): Record<string, Call> {
  const session = client.sessions.connect('s-1');
  const page = client.browser.session('b-1');
  const desktop = client.computerUse.connect('s-1');
  const run = new AsyncExecution(client.executions, 1, 's-1');
  // Its following is stopped at once (an aborted signal of its own), so it sends nothing by itself.
  const handle = new CommandHandle(client.processes, 's-1', runningProcess, { onAbort: 'disconnect', signal: AbortSignal.abort() });
  const owner = { sessionId: 's-1' };
  const policy = { allowHttps: true };
  return {
    'Sandboxd.execute': (signal) => client.execute('1', { sessionId: 's-1', signal }),
    'Sandboxd.executeAsync': (signal) => client.executeAsync('1', { sessionId: 's-1', signal }),
    'Sandboxd.health': (signal) => client.health({ signal }),

    'sessions.create': (signal) => client.sessions.create({ memoryMb: 512, signal }),
    'sessions.status': (signal) => client.sessions.status('s-1', { signal }),
    'sessions.info': (signal) => client.sessions.info('s-1', { signal }),
    'sessions.usage': (signal) => client.sessions.usage('s-1', { signal }),
    'sessions.kill': (signal) => client.sessions.kill('s-1', { signal }),
    'sessions.appUrl': (signal) => client.sessions.appUrl('s-1', 8000, { signal }),

    'Session.execute': (signal) => session.execute('1', { signal }),
    'Session.executeAsync': (signal) => session.executeAsync('1', { signal }),
    'Session.upload': (signal) => session.upload('x', '/root/x', { signal }),
    'Session.writeFiles': (signal) => session.writeFiles([{ path: '/root/x', data: 'x' }], { signal }),
    'Session.download': (signal) => session.download('/root/x', { signal }),
    'Session.downloadStream': (signal) => session.downloadStream('/root/x', { signal }),
    'Session.watch': (signal) => session.watch('/root', { signal }),
    'Session.stat': (signal) => session.stat('/root/x', { signal }),
    'Session.exists': (signal) => session.exists('/root/x', { signal }),
    'Session.mkdir': (signal) => session.mkdir('/root/d', { signal }),
    'Session.remove': (signal) => session.remove('/root/d', { signal }),
    'Session.rename': (signal) => session.rename('/root/a', '/root/b', { signal }),
    'Session.createContext': (signal) => session.createContext({ signal }),
    'Session.listContexts': (signal) => session.listContexts({ signal }),
    'Session.restartContext': (signal) => session.restartContext('c-1', { signal }),
    'Session.deleteContext': (signal) => session.deleteContext('c-1', { signal }),
    'Session.status': (signal) => session.status({ signal }),
    'Session.setTimeout': (signal) => session.setTimeout(60_000, { signal }),
    'Session.details': (signal) => session.details({ signal }),
    'Session.usage': (signal) => session.usage({ signal }),
    'Session.kill': (signal) => session.kill({ signal }),
    'Session.appUrl': (signal) => session.appUrl(8000, { signal }),
    'Session.createTerminal': (signal) => session.createTerminal({ cols: 100, signal }),
    'Session.attachTerminal': (signal) => session.attachTerminal('pty-1', { WebSocket: NoWebSocket, signal }),
    'Session.executions': (signal) => session.executions({ limit: 5, signal }),

    'SessionProcesses.start': (signal) => session.processes.start('sleep 1', { signal }),
    'SessionProcesses.run': (signal) => session.processes.run('sleep 1', { signal }),
    'SessionProcesses.list': (signal) => session.processes.list({ signal }),
    'SessionProcesses.get': (signal) => session.processes.get('proc_1', { signal }),
    'SessionProcesses.output': (signal) => session.processes.output('proc_1', { signal }),
    'SessionProcesses.sendStdin': (signal) => session.processes.sendStdin('proc_1', 'x', { signal }),
    'SessionProcesses.closeStdin': (signal) => session.processes.closeStdin('proc_1', { signal }),
    'SessionProcesses.signal': (signal) => session.processes.signal('proc_1', 'SIGTERM', { signal }),
    'SessionProcesses.kill': (signal) => session.processes.kill('proc_1', { signal }),

    'SessionCommands.run': (signal) => session.commands.run('sleep 1', { signal }),
    'SessionCommands.connect': (signal) => session.commands.connect('proc_1', { signal }),
    'SessionCommands.list': (signal) => session.commands.list({ signal }),
    'SessionCommands.kill': (signal) => session.commands.kill('proc_1', { signal }),
    'SessionCommands.sendStdin': (signal) => session.commands.sendStdin('proc_1', 'x', { signal }),
    'SessionCommands.closeStdin': (signal) => session.commands.closeStdin('proc_1', { signal }),
    'CommandHandle.kill': (signal) => handle.kill({ signal }),
    'CommandHandle.sendStdin': (signal) => handle.sendStdin('x', { signal }),
    'CommandHandle.closeStdin': (signal) => handle.closeStdin({ signal }),

    'executions.get': (signal) => client.executions.get(1, { signal }),
    'executions.cancel': (signal) => client.executions.cancel(1, { signal }),
    'executions.list': (signal) => client.executions.list({ limit: 5, signal }),
    'executions.wait': (signal) => client.executions.wait(1, { signal }),
    'AsyncExecution.get': (signal) => run.get({ signal }),
    'AsyncExecution.cancel': (signal) => run.cancel({ signal }),
    'AsyncExecution.wait': (signal) => run.wait({ signal }),

    'files.write': (signal) => client.files.write('s-1', [{ path: '/root/x', data: 'x' }], { signal }),
    'files.upload': (signal) => client.files.upload('s-1', 'x', '/root/x', { signal }),
    'files.download': (signal) => client.files.download('s-1', '/root/x', { signal }),
    'files.downloadStream': (signal) => client.files.downloadStream('s-1', '/root/x', { signal }),
    'files.watch': (signal) => client.files.watch('s-1', '/root', { recursive: true, signal }),
    'files.list': (signal) => client.files.list('s-1', '/root', { depth: 2, signal }),
    'files.stat': (signal) => client.files.stat('s-1', '/root/x', { signal }),
    'files.exists': (signal) => client.files.exists('s-1', '/root/x', { signal }),
    'files.mkdir': (signal) => client.files.mkdir('s-1', '/root/d', { signal }),
    'files.remove': (signal) => client.files.remove('s-1', '/root/d', { recursive: true, signal }),
    'files.rename': (signal) => client.files.rename('s-1', '/root/a', '/root/b', { signal }),

    'processes.start': (signal) => client.processes.start('s-1', 'sleep 1', { signal }),
    'processes.run': (signal) => client.processes.run('s-1', 'sleep 1', { signal }),
    'processes.list': (signal) => client.processes.list('s-1', { signal }),
    'processes.get': (signal) => client.processes.get('s-1', 'proc_1', { signal }),
    'processes.output': (signal) => client.processes.output('s-1', 'proc_1', { signal }),
    'processes.sendStdin': (signal) => client.processes.sendStdin('s-1', 'proc_1', 'x', { signal }),
    'processes.closeStdin': (signal) => client.processes.closeStdin('s-1', 'proc_1', { signal }),
    'processes.signal': (signal) => client.processes.signal('s-1', 'proc_1', 'SIGINT', { signal }),
    'processes.kill': (signal) => client.processes.kill('s-1', 'proc_1', { signal }),

    'contexts.create': (signal) => client.contexts.create('s-1', { signal }),
    'contexts.list': (signal) => client.contexts.list('s-1', { signal }),
    'contexts.get': (signal) => client.contexts.get('s-1', 'c-1', { signal }),
    'contexts.restart': (signal) => client.contexts.restart('s-1', 'c-1', { signal }),
    'contexts.delete': (signal) => client.contexts.delete('s-1', 'c-1', { signal }),

    'sandboxes.list': (signal) => client.sandboxes.list({ metadata: { team: 'a' }, signal }),

    'vms.create': (signal) => client.vms.create({ template: 'default', signal }),
    'vms.list': (signal) => client.vms.list({ status: 'active', signal }),
    'vms.get': (signal) => client.vms.get('vm-1', { signal }),
    'vms.delete': (signal) => client.vms.delete('vm-1', { signal }),
    'vms.snapshot': (signal) => client.vms.snapshot('vm-1', { name: 'snap', signal }),
    'vms.clone': (signal) => client.vms.clone('vm-1', { count: 2, signal }),
    'vms.pause': (signal) => client.vms.pause('vm-1', { signal }),
    'vms.resume': (signal) => client.vms.resume('vm-1', { signal }),
    'vms.setTimeout': (signal) => client.vms.setTimeout('vm-1', 60_000, { signal }),
    'vms.setLifetime': (signal) => client.vms.setLifetime('vm-1', 60, { signal }),

    'snapshots.list': (signal) => client.snapshots.list({ signal }),
    'snapshots.get': (signal) => client.snapshots.get('snap-1', { signal }),
    'snapshots.delete': (signal) => client.snapshots.delete('snap-1', { signal }),
    'snapshots.clone': (signal) => client.snapshots.clone('snap-1', { count: 2, signal }),

    'volumes.create': (signal) => client.volumes.create({ name: 'data', sizeGb: 1, signal }),
    'volumes.list': (signal) => client.volumes.list({ signal }),
    'volumes.get': (signal) => client.volumes.get('vol-1', { signal }),
    'volumes.delete': (signal) => client.volumes.delete('vol-1', { signal }),
    'networks.create': (signal) => client.networks.create({ name: 'lan', signal }),
    'networks.list': (signal) => client.networks.list({ signal }),
    'networks.get': (signal) => client.networks.get('lan', { signal }),
    'networks.delete': (signal) => client.networks.delete('lan', { signal }),
    'networks.addMember': (signal) => client.networks.addMember('lan', 'vm-1', { signal }),
    'networks.removeMember': (signal) => client.networks.removeMember('lan', 'vm-1', { signal }),

    'apps.deploy': (signal) => client.apps.deploy(new Uint8Array([0x1f, 0x8b]), { name: 'hello', signal }),
    'apps.list': (signal) => client.apps.list({ signal }),
    'apps.get': (signal) => client.apps.get('hello', { signal }),
    'apps.delete': (signal) => client.apps.delete('hello', { signal }),
    'apps.deployments': (signal) => client.apps.deployments('hello', { signal }),
    'apps.deployment': (signal) => client.apps.deployment('hello', 1, { signal }),
    'apps.deploymentLogs': (signal) => client.apps.deploymentLogs('hello', 1, { follow: true, signal }),
    'apps.logs': (signal) => client.apps.logs('hello', { follow: true, signal }),
    'apps.waitForDeployment': (signal) => client.apps.waitForDeployment('hello', 1, { signal }),
    'apps.rollback': (signal) => client.apps.rollback('hello', { version: 1, signal }),
    'apps.restart': (signal) => client.apps.restart('hello', { signal }),

    'apiKeys.create': (signal) => client.apiKeys.create({ description: 'ci' }, { signal }),
    'apiKeys.list': (signal) => client.apiKeys.list({ signal }),
    'apiKeys.get': (signal) => client.apiKeys.get(1, { signal }),
    'apiKeys.update': (signal) => client.apiKeys.update(1, { description: 'ci' }, { signal }),
    'apiKeys.delete': (signal) => client.apiKeys.delete(1, { signal }),
    'apiKeys.check': (signal) => client.apiKeys.check({ signal }),

    'sshKeys.create': (signal) => client.sshKeys.create('ssh-ed25519 AAAA me@host', { name: 'me', signal }),
    'sshKeys.list': (signal) => client.sshKeys.list({ signal }),
    'sshKeys.get': (signal) => client.sshKeys.get(1, { signal }),
    'sshKeys.delete': (signal) => client.sshKeys.delete(1, { signal }),
    'sshKeys.info': (signal) => client.sshKeys.info({ signal }),

    'auth.token': (signal) => client.auth.token({ username: 'u', password: 'p' }, { signal }),

    'cliAuth.start': (signal) => client.cliAuth.start({ hostname: 'h', codeChallenge: 'c' }, { signal }),
    'cliAuth.approve': (signal) => client.cliAuth.approve('ABCD-EFGH', { signal }),
    'cliAuth.exchange': (signal) => client.cliAuth.exchange({ deviceCode: 'd', codeVerifier: 'v' }, { signal }),
    'cliAuth.waitForKey': (signal) => client.cliAuth.waitForKey({ deviceCode: 'd', codeVerifier: 'v', interval: 1, signal }),

    'webhooks.endpoints.create': (signal) => client.webhooks.endpoints.create({ url: 'https://example.com/hook', event_patterns: ['vm.*'] }, { signal }),
    'webhooks.endpoints.list': (signal) => client.webhooks.endpoints.list({ signal }),
    'webhooks.endpoints.get': (signal) => client.webhooks.endpoints.get('we-1', { signal }),
    'webhooks.endpoints.update': (signal) => client.webhooks.endpoints.update('we-1', { enabled: false }, { signal }),
    'webhooks.endpoints.delete': (signal) => client.webhooks.endpoints.delete('we-1', { signal }),
    'webhooks.endpoints.test': (signal) => client.webhooks.endpoints.test('we-1', { signal }),
    'webhooks.endpoints.rotateSecret': (signal) => client.webhooks.endpoints.rotateSecret('we-1', { signal }),
    'webhooks.endpoints.verify': (signal) => client.webhooks.endpoints.verify('we-1', { signal }),
    'webhooks.deliveries.list': (signal) => client.webhooks.deliveries.list({ limit: 5, signal }),
    'webhooks.deliveries.get': (signal) => client.webhooks.deliveries.get('wd-1', { signal }),
    'webhooks.deliveries.replay': (signal) => client.webhooks.deliveries.replay('wd-1', { signal }),

    'audit.list': (signal) => client.audit.list({ limit: 5, signal }),

    'egress.getVm': (signal) => client.egress.getVm('vm-1', { signal }),
    'egress.setVm': (signal) => client.egress.setVm('vm-1', policy, { signal }),
    'egress.getSession': (signal) => client.egress.getSession('s-1', { signal }),
    'egress.setSession': (signal) => client.egress.setSession('s-1', policy, { signal }),
    'egress.get': (signal) => client.egress.get('vm-1', { signal }),
    'egress.set': (signal) => client.egress.set('s-1', policy, { signal }),
    'egress.log': (signal) => client.egress.log('vm-1', { verdict: 'refused', signal }),

    'vaults.create': (signal) => client.vaults.create('keys', { description: 'd', signal }),
    'vaults.list': (signal) => client.vaults.list({ signal }),
    'vaults.get': (signal) => client.vaults.get('v-1', { signal }),
    'vaults.update': (signal) => client.vaults.update('v-1', { name: 'keys2' }, { signal }),
    'vaults.delete': (signal) => client.vaults.delete('v-1', { signal }),
    'vaults.setSecret': (signal) => client.vaults.setSecret('v-1', 'TOKEN', { value: 'x', allowedHosts: ['api.example.com'] }, { signal }),
    'vaults.deleteSecret': (signal) => client.vaults.deleteSecret('v-1', 'TOKEN', { signal }),
    'vaults.requestLogs': (signal) => client.vaults.requestLogs('v-1', { outcome: 'flagged', signal }),

    'usage.daily': (signal) => client.usage.daily({ days: 7, signal }),

    'admin.users': (signal) => client.admin.users({ signal }),
    'admin.setUserPlan': (signal) => client.admin.setUserPlan(1, 'pro', { signal }),
    'admin.nodes': (signal) => client.admin.nodes({ signal }),
    'admin.storage': (signal) => client.admin.storage({ signal }),
    'admin.collectGarbage': (signal) => client.admin.collectGarbage({ signal, dryRun: true }),

    'events.stream': (signal) => client.events.stream({ signal }),

    'shares.create': (signal) => client.shares.create({ sessionId: 's-1', port: 8000, signal }),
    'shares.list': (signal) => client.shares.list({ sessionId: 's-1', signal }),
    'shares.get': (signal) => client.shares.get('sh-1', { signal }),
    'shares.delete': (signal) => client.shares.delete('sh-1', { signal }),

    'customDomains.create': (signal) => client.customDomains.create({ domain: 'app.example.com', shareId: 'sh-1', signal }),
    'customDomains.list': (signal) => client.customDomains.list({ signal }),
    'customDomains.get': (signal) => client.customDomains.get('cd-1', { signal }),
    'customDomains.verify': (signal) => client.customDomains.verify('cd-1', { signal }),
    'customDomains.delete': (signal) => client.customDomains.delete('cd-1', { signal }),

    'terminals.create': (signal) => client.terminals.create(owner, { command: 'top', signal }),
    'terminals.list': (signal) => client.terminals.list({ vmId: 'vm-1' }, { signal }),
    'terminals.get': (signal) => client.terminals.get(owner, 'pty-1', { signal }),
    'terminals.resize': (signal) => client.terminals.resize(owner, 'pty-1', 120, 40, { signal }),
    'terminals.delete': (signal) => client.terminals.delete(owner, 'pty-1', { signal }),
    'terminals.attach': (signal) => client.terminals.attach(owner, 'pty-1', { WebSocket: NoWebSocket, signal }),

    'templates.create': (signal) => client.templates.create({ name: 't', ociImage: 'python:3.12', signal }),
    'templates.list': (signal) => client.templates.list({ limit: 5, signal }),
    'templates.get': (signal) => client.templates.get('t-1', { signal }),
    'templates.logs': (signal) => client.templates.logs('t-1', { after: 0, signal }),
    'templates.delete': (signal) => client.templates.delete('t-1', { signal }),
    'templates.waitUntilReady': (signal) => client.templates.waitUntilReady('t-1', { signal }),

    'browser.createSession': (signal) => client.browser.createSession({ viewportWidth: 800, signal }),
    'browser.listSessions': (signal) => client.browser.listSessions({ signal }),
    'browser.getSession': (signal) => client.browser.getSession('b-1', { signal }),
    'browser.closeSession': (signal) => client.browser.closeSession('b-1', { signal }),
    'browser.capabilities': (signal) => client.browser.capabilities({ signal }),
    'browser.render': (signal) => client.browser.render({ url: 'https://example.com', signal }),
    'browser.renderScreenshot': (signal) => client.browser.renderScreenshot({ html: '<p>x</p>', signal }),
    'browser.usage': (signal) => client.browser.usage({ signal }),
    'browser.usageHistory': (signal) => client.browser.usageHistory({ limit: 5, signal }),
    'browser.screenshot': (signal) => client.browser.screenshot(1, { signal }),
    'browser.authTest': (signal) => client.browser.authTest({ signal }),
    'browser.interact': (signal) =>
      client.browser.interact('/v1/browser/interactions/hover', 'browser.element', { session_id: 'b-1', selector: 'a' }, { signal }),
    'browser.credentials.create': (signal) =>
      client.browser.credentials.create({ name: 'c', username: 'u', password: 'p', allowedHosts: ['example.com'], signal }),
    'browser.credentials.list': (signal) => client.browser.credentials.list({ signal }),
    'browser.credentials.get': (signal) => client.browser.credentials.get('bc-1', { signal }),
    'browser.credentials.update': (signal) => client.browser.credentials.update('bc-1', { username: 'u2' }, { signal }),
    'browser.credentials.delete': (signal) => client.browser.credentials.delete('bc-1', { signal }),

    'BrowserSession.navigate': (signal) => page.navigate('https://example.com', { waitUntil: 'load', signal }),
    'BrowserSession.click': (signal) => page.click('#go', { clickCount: 2, signal }),
    'BrowserSession.type': (signal) => page.type('#q', 'hello', { signal }),
    'BrowserSession.fill': (signal) => page.fill('#q', 'hello', { signal }),
    'BrowserSession.scroll': (signal) => page.scroll({ y: 400 }, { signal }),
    'BrowserSession.wait': (signal) => page.wait('visible', { selector: '#q', signal }),
    'BrowserSession.hover': (signal) => page.hover('#go', { signal }),
    'BrowserSession.keypress': (signal) => page.keypress('Enter', { signal }),
    'BrowserSession.screenshot': (signal) => page.screenshot({ fullPage: true, signal }),
    'BrowserSession.extract': (signal) => page.extract({ selector: 'a', signal }),
    'BrowserSession.content': (signal) => page.content({ includeAnchors: true, signal }),
    'BrowserSession.fillCredential': (signal) => page.fillCredential('bc-1', { submit: true, signal }),
    'BrowserSession.info': (signal) => page.info({ signal }),
    'BrowserSession.close': (signal) => page.close({ signal }),

    'computerUse.create': (signal) => client.computerUse.create({ screenWidth: 1024, signal }),
    'computerUse.request': (signal) => client.computerUse.request('s-1', 'GET', 'display', undefined, { signal }),
    'computerUse.action': (signal) => client.computerUse.action('s-1', { action: 'screenshot' }, { signal }),
    'computerUse.screenshot': (signal) => client.computerUse.screenshot('s-1', { scale: 0.5, signal }),
    'computerUse.viewerUrl': (signal) => client.computerUse.viewerUrl('s-1', { viewOnly: true, signal }),
    'computerUse.recordings': (signal) => client.computerUse.recordings('s-1', { signal }),
    'computerUse.recording': (signal) => client.computerUse.recording('s-1', 'r-1', { signal }),
    'computerUse.downloadRecording': (signal) => client.computerUse.downloadRecording('s-1', 'r-1', { signal }),
    'computerUse.deleteRecording': (signal) => client.computerUse.deleteRecording('s-1', 'r-1', { signal }),
    'computerUse.waitForRecording': (signal) => client.computerUse.waitForRecording('s-1', 'r-1', { signal }),

    'Desktop.action': (signal) => desktop.action({ action: 'key', text: 'Return' }, { signal }),
    'Desktop.screenshot': (signal) => desktop.screenshot({ width: 640, signal }),
    'Desktop.moveMouse': (signal) => desktop.moveMouse(10, 20, { signal }),
    'Desktop.click': (signal) => desktop.click(10, 20, { count: 2, signal }),
    'Desktop.drag': (signal) => desktop.drag([0, 0], [10, 10], { signal }),
    'Desktop.mouseDown': (signal) => desktop.mouseDown(10, 20, { signal }),
    'Desktop.mouseUp': (signal) => desktop.mouseUp(10, 20, { signal }),
    'Desktop.scroll': (signal) => desktop.scroll('down', 3, undefined, { signal }),
    'Desktop.type': (signal) => desktop.type('hello', { signal }),
    'Desktop.key': (signal) => desktop.key('ctrl+s', { signal }),
    'Desktop.holdKey': (signal) => desktop.holdKey('shift', 1, { signal }),
    'Desktop.cursorPosition': (signal) => desktop.cursorPosition({ signal }),
    'Desktop.wait': (signal) => desktop.wait(1, { signal }),
    'Desktop.display': (signal) => desktop.display({ signal }),
    'Desktop.resize': (signal) => desktop.resize(1280, 800, { signal }),
    'Desktop.windows': (signal) => desktop.windows({ signal }),
    'Desktop.viewerUrl': (signal) => desktop.viewerUrl({ signal }),
    'Desktop.startRecording': (signal) => desktop.startRecording({ framerate: 10, signal }),
    'Desktop.stopRecording': (signal) => desktop.stopRecording({ signal }),
    'Desktop.recordings': (signal) => desktop.recordings({ signal }),
    'Desktop.waitForRecording': (signal) => desktop.waitForRecording('r-1', { intervalMs: 100, signal }),
    'Desktop.downloadRecording': (signal) => desktop.downloadRecording('r-1', { signal }),
  };
}

/**
 * Methods that send no request, with why: they make an object (`connect`, `session`), end or await a handle's own
 * following (`wait`, `disconnect`: stopped by the run's signal), or are private helpers.
 */
const SENDS_NOTHING = new Set([
  'sessions.connect',
  'browser.session',
  'computerUse.connect',
  'computerUse.session',
  'CommandHandle.wait',
  'CommandHandle.disconnect',
  'CommandHandle.follow',
  'CommandHandle.deliver',
  'SessionCommands.untilAborted',
  'processes.body',
  'processes.untilAnswered',
  'processes.killStarted',
  'files.downloadRequest',
  'computerUse.path',
  'webhooks.deliveries.fetchDeliveries',
]);

/**
 * Calls whose request goes on after the abort, by design: the answer names the process they started, which is then
 * killed (a start the server may already have acted on is not left running unseen).
 */
const REQUEST_KEPT = new Set(['processes.run', 'SessionProcesses.run', 'SessionCommands.run']);

/** Calls that wait before their first request (the login's poll interval): aborted during that wait. */
const WAIT_FIRST = new Set(['cliAuth.waitForKey']);

/** The objects whose methods `CALLS` must cover, by the name its keys use. */
function objectsOf(client: Sandboxd): Map<string, object> {
  const session = client.sessions.connect('s-1');
  const objects = new Map<string, object>([
    ['Sandboxd', client],
    ['Session', session],
    ['SessionProcesses', session.processes],
    ['SessionCommands', session.commands],
    ['CommandHandle', new CommandHandle(client.processes, 's-1', runningProcess, { onAbort: 'disconnect', signal: AbortSignal.abort() })],
    ['AsyncExecution', new AsyncExecution(client.executions, 1, 's-1')],
    ['BrowserSession', client.browser.session('b-1')],
    ['Desktop', client.computerUse.connect('s-1')],
  ]);
  // Every resource of the client, and the resources they hold (webhooks.endpoints, browser.credentials…), found by
  // walking them: a resource added later is covered without being named here. `execution` is the client's private
  // helper behind `client.execute`.
  const walk = (prefix: string, owner: object) => {
    for (const [key, value] of Object.entries(owner)) {
      if (!value || typeof value !== 'object' || Object.getPrototypeOf(value) === Object.prototype) continue;
      if (value === client.transport || value === client || [...objects.values()].includes(value) || key === 'execution') continue;
      const name = prefix ? `${prefix}.${key}` : key;
      objects.set(name, value);
      walk(name, value);
    }
  };
  walk('', client);
  return objects;
}

function methodsOf(object: object): string[] {
  const prototype = Object.getPrototypeOf(object) as object;
  return Object.getOwnPropertyNames(prototype).filter(
    (name) => name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(prototype, name)?.value === 'function',
  );
}

/** Runs a call to its end: awaits a promise (or a paged list's first page), or asks a stream for its first event. */
async function settle(result: PromiseLike<unknown> | AsyncIterable<unknown>): Promise<unknown> {
  if (typeof (result as PromiseLike<unknown>).then === 'function') return await result;
  return await (result as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
}

/** What the call rejected with; a call that resolves, or is still pending after 2 s (its signal ignored), fails the test. */
async function rejection(name: string, result: PromiseLike<unknown> | AsyncIterable<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `${name} still runs 2 s after its signal was aborted` })), 2000);
  });
  try {
    return await Promise.race([
      settle(result).then(
        () => assert.fail(`${name} resolved, though its signal was aborted`),
        (error: unknown) => error,
      ),
      stuck,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

interface Received {
  method: string;
  path: string;
  res: http.ServerResponse;
  /** Resolves when the client closed the connection. */
  closed: Promise<void>;
}

describe('AbortSignal on every call', () => {
  let server: http.Server;
  let client: Sandboxd;
  const received: Received[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const closed = new Promise<void>((resolve) => res.once('close', resolve));
      received.push({ method: req.method!, path: new URL(req.url!, 'http://x').pathname, res, closed });
      req.resume();
      // The records two waits poll answer "not yet"; everything else is never answered.
      if (req.url === '/v1/executions/7') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 7, session_id: 's-1', status: 'running', is_complete: false }));
      } else if (req.url === '/v1/sessions/s-poll/recordings') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ recordings: [{ recording_id: 'r-1', status: 'saving' }] }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // Retries on and 1 ms apart: a call that sent its request again would show at once.
    client = new Sandboxd({ apiKey: 'k', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 3, retryDelay: 1 });
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** The request after the first `count` the server received, once it arrives. */
  async function requestAfter(count: number, name: string): Promise<Received> {
    const deadline = Date.now() + 5000;
    while (received.length <= count) {
      if (Date.now() > deadline) assert.fail(`${name}: no request reached the server`);
      await delay(1);
    }
    return received[count]!;
  }

  test('every method that sends a request is in the list that calls it with { signal }', () => {
    const listed = new Set(Object.keys(calls(client)));
    const missing: string[] = [];
    for (const [name, object] of objectsOf(client)) {
      for (const method of methodsOf(object)) {
        const key = `${name}.${method}`;
        if (!listed.has(key) && !SENDS_NOTHING.has(key)) missing.push(key);
        listed.delete(key);
      }
    }
    assert.deepEqual(missing, [], 'methods missing from CALLS (give them a signal and list them), or from SENDS_NOTHING');
    assert.deepEqual([...listed], [], 'CALLS names methods that do not exist');
  });

  test('a signal aborted already: every call rejects with its reason at once and sends nothing', async () => {
    const sent = received.length;
    for (const [name, call] of Object.entries(calls(client))) {
      const reason = new Error(`stop ${name}`);
      const started = performance.now();
      const error = await rejection(name, call(AbortSignal.abort(reason)));
      const elapsed = performance.now() - started;
      assert.equal(error, reason, `${name} rejects with the signal's reason`);
      assert.ok(elapsed < PROMPT_MS, `${name} rejected after ${elapsed.toFixed(0)} ms`);
    }
    await delay(20);
    assert.deepEqual(
      received.slice(sent).map((r) => `${r.method} ${r.path}`),
      [],
      'no request is sent for an aborted signal',
    );
  });

  test('a signal aborted while the request is out: the call rejects with its reason promptly, cancelled, not sent again', async () => {
    for (const [name, call] of Object.entries(calls(client))) {
      const sent = received.length;
      const controller = new AbortController();
      const reason = new Error(`stop ${name}`);
      const outcome = rejection(name, call(controller.signal));
      if (WAIT_FIRST.has(name)) await delay(20);
      const request = WAIT_FIRST.has(name) ? undefined : await requestAfter(sent, name);
      const started = performance.now();
      controller.abort(reason);
      const error = await outcome;
      const elapsed = performance.now() - started;
      assert.equal(error, reason, `${name} rejects with the signal's reason`);
      assert.ok(elapsed < PROMPT_MS, `${name} rejected ${elapsed.toFixed(0)} ms after the abort`);
      if (request && !REQUEST_KEPT.has(name)) {
        assert.ok(await settlesWithin(request.closed, 1000), `${name}: the request (${request.method} ${request.path}) is cancelled`);
      }
      await delay(5);
      assert.equal(received.length, sent + (request ? 1 : 0), `${name} sends nothing more after the abort`);
    }
  });

  test('a wait stops polling when its signal aborts, between polls too', async () => {
    const waits: [string, (signal: AbortSignal) => Promise<unknown>, number][] = [
      ['executions.wait', (signal) => client.executions.wait(7, { pollInterval: 60_000, signal }), 1],
      ['computerUse.waitForRecording', (signal) => client.computerUse.waitForRecording('s-poll', 'r-1', { intervalMs: 60_000, signal }), 1],
      ['cliAuth.waitForKey', (signal) => client.cliAuth.waitForKey({ deviceCode: 'd', codeVerifier: 'v', interval: 60, signal }), 0],
    ];
    for (const [name, wait, polls] of waits) {
      const sent = received.length;
      const controller = new AbortController();
      const reason = new Error(`stop ${name}`);
      const outcome = rejection(name, wait(controller.signal));
      if (polls > 0) await requestAfter(sent, name);
      await delay(30); // the answer is in: the wait sleeps until its next poll
      const started = performance.now();
      controller.abort(reason);
      assert.equal(await outcome, reason);
      assert.ok(performance.now() - started < PROMPT_MS, `${name} stopped waiting at once`);
      assert.equal(received.length, sent + polls, `${name} polled ${polls} time(s), and no more`);
    }
  });

  test('a process run abandoned before its answer is killed once the answer names the process', async () => {
    const sent = received.length;
    const controller = new AbortController();
    const outcome = rejection('processes.run', client.processes.run('s-late', 'sleep 100', { signal: controller.signal }));
    const start = await requestAfter(sent, 'processes.run');
    controller.abort(new Error('gave up'));
    assert.equal(((await outcome) as Error).message, 'gave up');
    // The server answers after all: the process it started is killed, not left running unseen.
    start.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    start.res.write(`${JSON.stringify({ type: 'start', process: { ...runningProcess, process_id: 'proc_late', session_id: 's-late' } })}\n`);
    const kill = await requestAfter(sent + 1, 'the kill of the abandoned process');
    assert.equal(`${kill.method} ${kill.path}`, 'DELETE /v1/sessions/s-late/processes/proc_late');
    assert.ok(await settlesWithin(start.closed, 1000), 'the run answer is then closed');
  });
});
