/** Administrators only: the users with their plans, and the nodes of the deployment. */
import { useState } from 'react';
import { api, type Schemas } from '../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../ui.tsx';

/** A user's plan, changed in place (PATCH /v1/admin/users/{id}); the list reloads after a change. */
function PlanPicker({ user, plans, onChanged }: { user: Schemas['AdminUser']; plans: string[]; onChanged: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const change = async (plan: string) => {
    setError(null);
    setSaving(true);
    try {
      await api('PATCH', `/v1/admin/users/${user.id}`, { plan });
      onChanged();
    } catch (reason) {
      setError(reason);
    } finally {
      setSaving(false);
    }
  };
  return (
    <>
      <select aria-label={`Plan of ${user.username}`} value={user.plan} disabled={saving} onChange={(event) => void change(event.target.value)}>
        {(plans.includes(user.plan) ? plans : [user.plan, ...plans]).map((plan) => (
          <option key={plan} value={plan}>
            {plan}
          </option>
        ))}
      </select>
      <ErrorBanner error={error} />
    </>
  );
}

export function AdminUsersPage() {
  const list = useLoad(() => api<Schemas['AdminUserList']>('GET', '/v1/admin/users'), []);
  return (
    <section>
      <h1>Users and plans</h1>
      <ErrorBanner error={list.error} />
      {list.data ? (
        <p className="muted">
          Plans: {list.data.plans.join(', ')} (new users get <strong>{list.data.default_plan}</strong>).
        </p>
      ) : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Username</th>
              <th scope="col">Plan</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.users ?? []).map((user) => (
              <tr key={user.id}>
                <td>{user.id}</td>
                <td>{user.username}</td>
                <td>
                  <PlanPicker user={user} plans={list.data!.plans} onChanged={list.reload} />
                </td>
                <td>{user.is_admin ? 'administrator' : 'user'}</td>
                <td>{formatTime(user.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function AdminNodesPage() {
  const list = useLoad(() => api<Schemas['AdminNodeList']>('GET', '/v1/admin/nodes'), []);
  return (
    <section>
      <h1>Nodes</h1>
      <ErrorBanner error={list.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">State</th>
              <th scope="col">VMs</th>
              <th scope="col">vCPUs used</th>
              <th scope="col">Memory used</th>
              <th scope="col">Version</th>
              <th scope="col">Heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.nodes ?? []).map((node) => (
              <tr key={node.worker_id}>
                <td>
                  <code>{node.worker_id}</code>
                </td>
                <td>
                  <span className={`status ${node.state === 'live' ? 'active' : 'killed'}`}>{node.state}</span>
                  {node.drained ? ' (drained)' : ''}
                </td>
                <td>
                  {node.load.running_vms} / {node.capacity.vm_slots}
                </td>
                <td>
                  {node.load.used_vcpus} / {node.capacity.vcpus}
                </td>
                <td>
                  {node.load.used_memory_mb} / {node.capacity.memory_mb} MiB
                </td>
                <td>{node.version}</td>
                <td>{formatTime(node.heartbeat_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
