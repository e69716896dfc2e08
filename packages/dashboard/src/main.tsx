/** The web console: signs in, then routes between the pages; the terminal loads only when opened. */
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, setUnauthenticatedHandler, type ConsoleUser } from './api.ts';
import { closeEventStream } from './events.ts';
import { navigate, parseRoute, useLocationKey, type Route } from './router.ts';
import { ErrorBanner, Link } from './ui.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { SandboxesPage } from './pages/sandboxes.tsx';
import { SessionPage } from './pages/session/session-page.tsx';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { AppPage, AppsPage } from './pages/apps/apps-page.tsx';
import { VaultsPage } from './pages/vaults/vaults-page.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { AuditPage } from './pages/audit.tsx';
import { CliLoginPage } from './pages/cli-login.tsx';
import { UsagePage } from './pages/usage.tsx';
import { AdminNodesPage, AdminUsersPage } from './pages/admin.tsx';
import './styles.css';

const NAV: { to: string; label: string; pages: Route['page'][]; admin?: boolean }[] = [
  { to: '/sandboxes', label: 'Sandboxes', pages: ['sandboxes', 'session'] },
  { to: '/apps', label: 'Apps', pages: ['apps', 'app'] },
  { to: '/keys', label: 'API keys', pages: ['keys'] },
  { to: '/vaults', label: 'Vaults', pages: ['vaults'] },
  { to: '/webhooks', label: 'Webhooks', pages: ['webhooks'] },
  { to: '/usage', label: 'Usage', pages: ['usage'] },
  { to: '/audit', label: 'Audit log', pages: ['audit'] },
  { to: '/admin/users', label: 'Users', pages: ['admin-users'], admin: true },
  { to: '/admin/nodes', label: 'Nodes', pages: ['admin-nodes'], admin: true },
];

function Page({ route, user }: { route: Route; user: ConsoleUser }) {
  switch (route.page) {
    case 'sandboxes':
      return <SandboxesPage />;
    case 'session':
      return <SessionPage sessionId={route.sessionId} />;
    case 'apps':
      return <AppsPage />;
    case 'app':
      return <AppPage appName={route.appName} />;
    case 'keys':
      return <ApiKeysPage />;
    case 'vaults':
      return <VaultsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'audit':
      return <AuditPage />;
    case 'usage':
      return <UsagePage />;
    case 'admin-users':
      return <AdminUsersPage />;
    case 'admin-nodes':
      return <AdminNodesPage />;
    case 'cli-login':
      return <CliLoginPage userCode={route.userCode} user={user} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            Nothing here. <Link to="/sandboxes">Back to the sandboxes</Link>.
          </p>
        </section>
      );
  }
}

function App() {
  const locationKey = useLocationKey();
  const route = parseRoute(location);
  const [user, setUser] = useState<ConsoleUser | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  const toSignIn = useCallback(() => {
    setUser(null);
    closeEventStream();
    const here = location.pathname + location.search;
    if (location.pathname !== '/sign-in') navigate(`/sign-in?next=${encodeURIComponent(here)}`, true);
  }, []);

  useEffect(() => {
    setUnauthenticatedHandler(toSignIn);
    api<ConsoleUser>('GET', '/v1/auth/session').then(setUser, (reason: { status?: number }) => {
      if (reason.status === 401) toSignIn();
      else setError(reason);
    });
  }, [toSignIn]);

  if (error) return <ErrorBanner error={error} />;
  if (user === undefined) return <p className="muted center">Loading…</p>;
  if (user === null || route.page === 'sign-in') {
    return (
      <SignInPage
        next={route.page === 'sign-in' ? route.next : '/'}
        onSignedIn={(signedIn, next) => {
          setUser(signedIn);
          navigate(next, true);
        }}
      />
    );
  }

  const signOut = async () => {
    await api('DELETE', '/v1/auth/session').catch(() => undefined);
    toSignIn();
  };

  return (
    <div className="shell" data-location={locationKey}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">sandboxd</span>
        <nav aria-label="Main">
          {NAV.filter((item) => !item.admin || user.is_admin).map((item) => (
            <Link key={item.to} to={item.to} className={item.pages.includes(route.page) ? 'active' : undefined}>
              {item.label}
            </Link>
          ))}
        </nav>
        <span className="who">
          {user.username}
          {user.is_admin ? ' (admin)' : ''}
          <button type="button" className="link" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main">
        <Page key={locationKey} route={route} user={user} />
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
