/**
 * GET /v2/sandboxes (`Sandbox.list`): the caller's running and paused sandboxes, newest first, filtered by state
 * (`running,paused`) and by metadata, a page at a time (`limit`, `nextToken` in, `x-next-token` out). Also the
 * deprecated GET /sandboxes: running sandboxes only, one unpaged list.
 */
import { AppError } from '../../../core/errors.ts';
import type { VmStatus } from '../../../model.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import type { SandboxState } from '../wire.ts';
import { listedSandbox } from './sandbox-view.ts';
import { ListSandboxesQuery, ListSandboxesV1Query } from './schemas.ts';

/** The VM statuses behind each E2B state (a starting VM is a running sandbox, as `sandboxStateOf` says). */
const VM_STATUSES_OF: Record<SandboxState, VmStatus[]> = { running: ['starting', 'active'], paused: ['paused'] };
/** E2B's page size when the caller names none, and the most a page holds. */
const DEFAULT_LIMIT = 100;
/** The most sandboxes the unpaged v1 list answers. */
const V1_LIMIT = 1000;

/** The VM statuses of a comma-joined `state` (both states when absent); 400 for a state E2B does not have. */
export function vmStatusesOf(state: string | undefined): VmStatus[] {
  const names = state
    ? state
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
    : ['running', 'paused'];
  return names.flatMap((name) => {
    if (name !== 'running' && name !== 'paused') throw new AppError('BAD_REQUEST', `state "${name}" is not one of running, paused`);
    return VM_STATUSES_OF[name];
  });
}

/**
 * E2B's metadata filter: one query value `k=v&k2=v2` whose keys and values the SDK URL-encoded once more
 * (`encodeURIComponent` before `URLSearchParams`), so each is decoded twice.
 */
export function metadataFilterOf(metadata: string | undefined): Record<string, string> {
  const filter: Record<string, string> = {};
  if (!metadata) return filter;
  try {
    for (const [key, value] of new URLSearchParams(metadata)) filter[decodeURIComponent(key)] = decodeURIComponent(value);
  } catch {
    throw new AppError('BAD_REQUEST', 'metadata is not a URL-encoded query of key=value pairs');
  }
  return filter;
}

export function registerListSandboxes(app: App, { services, requireAuth }: RouteContext): void {
  const { sessions } = services.sandbox;
  app.get('/v2/sandboxes', { schema: { hide: true, querystring: ListSandboxesQuery }, onRequest: requireAuth }, async (request, reply) => {
    const { query } = request;
    // Filters sandboxd cannot apply are refused, not ignored: a list that silently ignores a filter answers wrongly.
    if (query.template !== undefined) throw new AppError('BAD_REQUEST', 'the template filter is not offered by sandboxd; filter by metadata instead');
    if (query.startedAfter !== undefined) throw new AppError('BAD_REQUEST', 'the startedAfter filter is not offered by sandboxd');
    if (query.order === 'asc') throw new AppError('BAD_REQUEST', 'sandboxd lists sandboxes newest first only (order=desc)');
    const page = await sessions.listWithVm(principalOf(request), {
      vmStatuses: vmStatusesOf(query.state),
      metadata: metadataFilterOf(query.metadata),
      limit: query.limit ?? DEFAULT_LIMIT,
      ...(query.nextToken ? { cursor: query.nextToken } : {}),
    });
    if (page.nextCursor) reply.header('x-next-token', page.nextCursor);
    const now = services.clock.now();
    return page.items.map(({ session, vm }) => listedSandbox(session, vm, now)).filter((listed) => listed !== null);
  });

  app.get('/sandboxes', { schema: { hide: true, querystring: ListSandboxesV1Query }, onRequest: requireAuth }, async (request) => {
    const page = await sessions.listWithVm(principalOf(request), {
      vmStatuses: VM_STATUSES_OF.running,
      metadata: metadataFilterOf(request.query.metadata),
      limit: V1_LIMIT,
    });
    const now = services.clock.now();
    return page.items.map(({ session, vm }) => listedSandbox(session, vm, now)).filter((listed) => listed !== null);
  });
}
