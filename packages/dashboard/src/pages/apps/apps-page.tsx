/**
 * Apps: folders deployed with `sandbox deploy`, each a service at its own URL. The list shows each app's status,
 * live version and URL; an app's page (`/apps/<name>`) shows its deployments with a Rollback button for every
 * earlier version that was live, a Restart button, and its output (or a deployment's log) streamed as it is written.
 */
import { useEffect, useState } from 'react';
import { api, type AppDeploymentRecord, type AppRecord } from '../../api.ts';
import { ErrorBanner, formatTime, Link, useLoad } from '../../ui.tsx';
import { StreamedLog } from './streamed-log.tsx';

/** How often an app with a deployment under way is read again, milliseconds. */
const POLL_MS = 2000;
const IN_PROGRESS = new Set(['pending', 'building', 'starting', 'checking']);

const appPath = (app: string) => `/v1/apps/${encodeURIComponent(app)}`;

function Status({ status }: { status: string }) {
  // The console's colours: live ones as active, the ones under way as starting, the broken ones as failed.
  const tone = status === 'live' ? 'active' : status === 'deploying' || IN_PROGRESS.has(status) ? 'starting' : status === 'crashed' ? 'failed' : status;
  return <span className={`status ${tone}`}>{status}</span>;
}

export function AppsPage() {
  const apps = useLoad(() => api<{ apps: AppRecord[] }>('GET', '/v1/apps'), []);
  const list = apps.data?.apps ?? [];
  const deploying = list.some((app) => app.status === 'deploying');
  useEffect(() => {
    if (!deploying) return;
    const timer = setInterval(apps.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [deploying, apps.reload]);
  return (
    <section>
      <h1>Apps</h1>
      <p className="muted">
        Folders deployed as services, each at a URL of its own. Deploy one with <code>sandbox deploy</code> in a folder that has a <code>sandboxd.yaml</code>.
      </p>
      <ErrorBanner error={apps.error} />
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Your apps</caption>
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">Status</th>
              <th scope="col">Live version</th>
              <th scope="col">URL</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.map((app) => (
              <tr key={app.id} data-app={app.name}>
                <td>
                  <Link to={`/apps/${encodeURIComponent(app.name)}`}>{app.name}</Link>
                </td>
                <td>
                  <Status status={app.status} />
                </td>
                <td>{app.live_version === null ? '—' : `v${app.live_version}`}</td>
                <td>
                  <a href={app.url} target="_blank" rel="noopener noreferrer" className="clip">
                    {app.url}
                  </a>
                </td>
                <td>{formatTime(app.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {apps.data && list.length === 0 ? <p className="muted">No apps yet.</p> : null}
      </div>
    </section>
  );
}

export function AppPage({ appName }: { appName: string }) {
  const app = useLoad(() => api<AppRecord>('GET', appPath(appName)), [appName]);
  const deployments = useLoad(() => api<{ deployments: AppDeploymentRecord[] }>('GET', `${appPath(appName)}/deployments`), [appName]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  /** null: the app's output; a version: that deployment's log. */
  const [logOf, setLogOf] = useState<number | null>(null);
  /** Counts rollbacks and restarts: a version's log is read again from the start for each. */
  const [runs, setRuns] = useState(0);
  const record = app.data;
  const list = deployments.data?.deployments ?? [];
  const underWay = record?.status === 'deploying' || list.some((d) => IN_PROGRESS.has(d.status));
  const { reload: reloadApp } = app;
  const { reload: reloadDeployments } = deployments;
  useEffect(() => {
    if (!underWay) return;
    const timer = setInterval(() => {
      reloadApp();
      reloadDeployments();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [underWay, reloadApp, reloadDeployments]);

  const act = async (path: string, body: unknown) => {
    setError(null);
    setBusy(true);
    try {
      const started = await api<{ deployment: AppDeploymentRecord }>('POST', path, body);
      setLogOf(started.deployment.version);
      setRuns((n) => n + 1);
      reloadApp();
      reloadDeployments();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <p>
        <Link to="/apps">← Apps</Link>
      </p>
      <h1>{appName}</h1>
      <ErrorBanner error={app.error ?? deployments.error ?? error} />
      {record ? (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <Status status={record.status} />
            </dd>
            <dt>URL</dt>
            <dd>
              <a href={record.url} target="_blank" rel="noopener noreferrer">
                {record.url}
              </a>
            </dd>
            {record.custom_domains.length > 0 ? (
              <>
                <dt>Custom domains</dt>
                <dd>
                  {record.custom_domains.map((domain) => (
                    <div key={domain.id} data-custom-domain={domain.domain}>
                      {domain.status === 'verified' ? (
                        <a href={domain.url} target="_blank" rel="noopener noreferrer">
                          {domain.url}
                        </a>
                      ) : (
                        <span className="muted">{domain.domain} (pending: its DNS TXT record is not verified yet)</span>
                      )}
                    </div>
                  ))}
                </dd>
              </>
            ) : null}
            <dt>Live version</dt>
            <dd>{record.live_version === null ? '—' : `v${record.live_version}`}</dd>
            <dt>Latest version</dt>
            <dd>v{record.latest_version}</dd>
            <dt>Replicas</dt>
            <dd>{record.replicas}</dd>
          </dl>
          <div className="row app-actions">
            <button type="button" disabled={busy || record.live_version === null} onClick={() => act(`${appPath(appName)}/restart`, undefined)}>
              Restart
            </button>
          </div>
        </>
      ) : null}

      <h2>Deployments</h2>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Deployments of {appName}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Live at</th>
              <th scope="col">Error</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((d) => (
              <tr key={d.version} data-version={d.version} data-status={d.status}>
                <td>v{d.version}</td>
                <td>
                  <Status status={d.status} />
                </td>
                <td>{formatTime(d.created_at)}</td>
                <td>{formatTime(d.live_at)}</td>
                <td>{d.error ? <span className="warn">{d.error}</span> : '—'}</td>
                <td className="row">
                  <button type="button" onClick={() => setLogOf(d.version)} aria-pressed={logOf === d.version} aria-label={`Log of v${d.version}`}>
                    Log
                  </button>
                  {/* Rollback: a version that went live once and is not the live one now. */}
                  {d.live_at !== null && d.version !== record?.live_version ? (
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => act(`${appPath(appName)}/rollback`, { version: d.version })}
                      aria-label={`Roll back to v${d.version}`}
                    >
                      Rollback
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {deployments.data && list.length === 0 ? <p className="muted">No deployments.</p> : null}
      </div>

      <h2 className="row">
        {logOf === null ? 'Output' : `Log of v${logOf}`}
        {logOf !== null ? (
          <button type="button" onClick={() => setLogOf(null)}>
            Show the app&apos;s output
          </button>
        ) : null}
      </h2>
      {logOf === null ? (
        <StreamedLog key="app" path={`${appPath(appName)}/logs?follow=true`} label={`Output of ${appName}`} empty="(no output yet)" />
      ) : (
        <StreamedLog
          key={`v${logOf}-${runs}`}
          path={`${appPath(appName)}/deployments/${logOf}/logs?follow=true`}
          label={`Deployment log of v${logOf}`}
          empty="(no log yet)"
        />
      )}
    </section>
  );
}
