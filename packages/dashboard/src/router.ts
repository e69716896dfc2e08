/**
 * A small History API router: the console has a handful of flat routes, not worth a library's weight in the
 * first load. The paths must stay in step with CONSOLE_ROUTES in packages/server/src/api/dashboard/serve.ts,
 * which serves index.html for them.
 */
import { useEffect, useState } from 'react';

export type Route =
  | { page: 'sandboxes' }
  | { page: 'session'; sessionId: string }
  | { page: 'apps' }
  | { page: 'app'; appName: string }
  | { page: 'keys' }
  | { page: 'vaults' }
  | { page: 'webhooks' }
  | { page: 'audit' }
  | { page: 'usage' }
  | { page: 'admin-users' }
  | { page: 'admin-nodes' }
  | { page: 'cli-login'; userCode: string }
  | { page: 'sign-in'; next: string }
  | { page: 'not-found' };

export function parseRoute(location: Location): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const query = new URLSearchParams(location.search);
  if (path === '/' || path === '/sandboxes') return { page: 'sandboxes' };
  const session = /^\/sandboxes\/([^/]+)$/.exec(path);
  if (session) return { page: 'session', sessionId: decodeURIComponent(session[1]!) };
  if (path === '/apps') return { page: 'apps' };
  const app = /^\/apps\/([^/]+)$/.exec(path);
  if (app) return { page: 'app', appName: decodeURIComponent(app[1]!) };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/vaults') return { page: 'vaults' };
  if (path === '/webhooks') return { page: 'webhooks' };
  if (path === '/audit') return { page: 'audit' };
  if (path === '/usage') return { page: 'usage' };
  if (path === '/admin/users') return { page: 'admin-users' };
  if (path === '/admin/nodes') return { page: 'admin-nodes' };
  if (path === '/cli-login') return { page: 'cli-login', userCode: query.get('user_code') ?? '' };
  if (path === '/sign-in') return { page: 'sign-in', next: safeNext(query.get('next')) };
  return { page: 'not-found' };
}

/** Only a path of this origin may follow sign-in (no open redirect). */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

export function useLocationKey(): string {
  const [key, setKey] = useState(location.pathname + location.search);
  useEffect(() => {
    const update = () => setKey(location.pathname + location.search);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return key;
}
