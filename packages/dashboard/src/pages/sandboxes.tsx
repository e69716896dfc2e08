/**
 * The caller's running sandboxes (GET /v1/sessions/sandboxes), live: refreshed on VM events from the event
 * stream, with each one's lifetime counting down. Filter by metadata, create a session (its VM starts at once),
 * kill one.
 */
import { useState, type FormEvent } from 'react';
import { api, withQuery, type SandboxInfo, type Schemas } from '../api.ts';
import { useLiveEvents } from '../events.ts';
import { navigate } from '../router.ts';
import { ErrorBanner, formatDuration, formatTime, Link, messageOf, useLoad, useNow } from '../ui.tsx';

const VCPUS = [1, 2, 4, 6, 8];

/** `a=1, b=2` → {"a":"1","b":"2"}; null when empty; throws on a part without `=`. */
export function parsePairs(text: string): Record<string, string> | null {
  const pairs = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (pairs.length === 0) return null;
  const result: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`"${pair}" is not key=value`);
    result[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return result;
}

function Countdown({ endAt }: { endAt: string | null }) {
  const now = useNow();
  if (!endAt) return <span>—</span>;
  const left = (Date.parse(endAt) - now) / 1000;
  return <span className={left < 60 ? 'warn' : undefined}>{left > 0 ? formatDuration(left) : 'ending'}</span>;
}

function CreateForm({ onCreated }: { onCreated: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The caller's vaults to attach; the form works without them when they cannot be listed.
  const vaults = useLoad(() => api<Schemas['Vault'][]>('GET', '/v1/vaults'), []);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const metadata = parsePairs(String(form.get('metadata') ?? ''));
      const template = String(form.get('template') ?? '').trim();
      const vaultIds = form.getAll('vault_ids').map(String).filter(Boolean);
      const body: Schemas['SessionCreateRequest'] = {
        vcpu_count: Number(form.get('vcpu_count')) as Schemas['SessionCreateRequest']['vcpu_count'],
        memory_mb: Number(form.get('memory_mb')),
        vm_lifetime_seconds: Number(form.get('lifetime_minutes')) * 60,
        prewarm: true,
        ...(template ? { template } : {}),
        ...(metadata ? { metadata } : {}),
        ...(vaultIds.length ? { vault_ids: vaultIds } : {}),
      };
      const created = await api<Schemas['SessionCreateResponse']>('POST', '/v1/sessions/session', body);
      onCreated();
      navigate(`/sandboxes/${created.session_id}`);
    } catch (reason) {
      setError(reason);
      setBusy(false);
    }
  };
  return (
    <form className="card grid-form" onSubmit={submit} aria-label="Create a sandbox">
      <h2>New sandbox</h2>
      <ErrorBanner error={error} />
      <label htmlFor="vcpu_count">vCPUs</label>
      <select id="vcpu_count" name="vcpu_count" defaultValue="1">
        {VCPUS.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <label htmlFor="memory_mb">Memory (MiB)</label>
      <input id="memory_mb" name="memory_mb" type="number" min={128} max={8192} step={128} defaultValue={512} required />
      <label htmlFor="lifetime_minutes">Lifetime (minutes)</label>
      <input id="lifetime_minutes" name="lifetime_minutes" type="number" min={1} max={43200} defaultValue={10} required />
      <label htmlFor="template">Template</label>
      <input id="template" name="template" placeholder="default" pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,62}" />
      <label htmlFor="metadata">Metadata</label>
      <input id="metadata" name="metadata" placeholder="team=ml, run=42" />
      {vaults.data && vaults.data.length > 0 ? (
        <>
          <label htmlFor="vault_ids">Vaults</label>
          <select id="vault_ids" name="vault_ids" multiple size={Math.min(4, Math.max(2, vaults.data.length))} aria-describedby="vault_ids-hint">
            {vaults.data.map((vault) => (
              <option key={vault.id} value={vault.id}>
                {`${vault.name} (${vault.secrets.map((secret) => secret.name).join(', ') || 'no secrets'})`}
              </option>
            ))}
          </select>
          <p className="muted" id="vault_ids-hint">
            Its VMs see each secret as a placeholder, swapped for the value only in requests to the secret&apos;s hosts.
          </p>
        </>
      ) : null}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Starting…' : 'Create sandbox'}
      </button>
    </form>
  );
}

export function SandboxesPage() {
  const [filter, setFilter] = useState('');
  const [showEnded, setShowEnded] = useState(false);
  const [filterError, setFilterError] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const list = useLoad(async () => {
    const metadata = parsePairs(filter);
    return api<SandboxInfo[]>('GET', withQuery('/v1/sessions/sandboxes', { metadata: metadata ? JSON.stringify(metadata) : undefined }));
  }, [filter]);
  useLiveEvents(['vm.', 'session.'], list.reload);
  // The API lists ended VMs too (most recent first); the console shows the running ones unless asked.
  const shown = (list.data ?? []).filter((sandbox) => showEnded || sandbox.status !== 'killed');

  const kill = async (sandbox: SandboxInfo) => {
    if (!sandbox.session_id) return;
    setActionError(null);
    try {
      await api('POST', '/kill', { session_id: sandbox.session_id });
      list.reload();
    } catch (reason) {
      setActionError(reason);
    }
  };

  return (
    <section>
      <h1>Sandboxes</h1>
      <div className="columns">
        <div className="main-column">
          <form
            className="filter"
            role="search"
            onSubmit={(event) => {
              event.preventDefault();
              const text = String(new FormData(event.currentTarget).get('filter') ?? '');
              try {
                parsePairs(text);
                setFilterError(null);
                setFilter(text);
              } catch (reason) {
                setFilterError(messageOf(reason));
              }
            }}
          >
            <label htmlFor="filter">Filter by metadata</label>
            <input id="filter" name="filter" placeholder="key=value, …" />
            <button type="submit">Filter</button>
          </form>
          <label className="check">
            <input type="checkbox" checked={showEnded} onChange={(event) => setShowEnded(event.target.checked)} /> Show ended sandboxes
          </label>
          {filterError ? <div className="banner error">{filterError}</div> : null}
          <ErrorBanner error={list.error ?? actionError} />
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Running sandboxes</caption>
              <thead>
                <tr>
                  <th scope="col">Sandbox</th>
                  <th scope="col">Status</th>
                  <th scope="col">Size</th>
                  <th scope="col">Template</th>
                  <th scope="col">Metadata</th>
                  <th scope="col">Started</th>
                  <th scope="col">Ends in</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((sandbox) => (
                  <tr key={sandbox.sandbox_id} data-session-id={sandbox.session_id ?? ''}>
                    <td>{sandbox.session_id ? <Link to={`/sandboxes/${sandbox.session_id}`}>{sandbox.sandbox_id}</Link> : sandbox.sandbox_id}</td>
                    <td>
                      <span className={`status ${sandbox.status}`}>{sandbox.status}</span>
                    </td>
                    <td>
                      {sandbox.vcpu_count} vCPU · {sandbox.memory_mb} MiB
                    </td>
                    <td>{sandbox.template_id}</td>
                    <td>
                      {Object.entries(sandbox.metadata).map(([key, value]) => (
                        <span className="tag" key={key}>
                          {key}={value}
                        </span>
                      ))}
                    </td>
                    <td>{formatTime(sandbox.started_at)}</td>
                    <td>{sandbox.status === 'killed' ? '—' : <Countdown endAt={sandbox.end_at} />}</td>
                    <td>
                      {sandbox.session_id && sandbox.status !== 'killed' ? (
                        <button type="button" className="danger" onClick={() => void kill(sandbox)} aria-label={`Kill ${sandbox.sandbox_id}`}>
                          Kill
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data && shown.length === 0 ? <p className="muted">No running sandboxes{filter ? ' match this filter' : ''}.</p> : null}
          </div>
        </div>
        <CreateForm onCreated={list.reload} />
      </div>
    </section>
  );
}
