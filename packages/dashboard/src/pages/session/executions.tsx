/** The session's executions history: the last runs of code, live. */
import { api, withQuery, type TaskRecord } from '../../api.ts';
import { useLiveEvents } from '../../events.ts';
import { ErrorBanner, formatTime, useLoad } from '../../ui.tsx';

export function Executions({ sessionId, version }: { sessionId: string; version: number }) {
  const list = useLoad(() => api<TaskRecord[]>('GET', withQuery('/v1/executions/', { session_id: sessionId, limit: 20 })), [sessionId, version]);
  useLiveEvents(['execution.'], list.reload);
  return (
    <section className="card" aria-labelledby="executions-heading">
      <h2 id="executions-heading">Executions</h2>
      <ErrorBanner error={list.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Code</th>
              <th scope="col">Status</th>
              <th scope="col">Exit</th>
              <th scope="col">Time</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((task) => (
              <tr key={task.id}>
                <td>{task.id}</td>
                <td>
                  <code className="clip">{task.code}</code>
                </td>
                <td>{task.status}</td>
                <td>{task.exit_code ?? '—'}</td>
                <td>{task.execution_time != null ? `${task.execution_time.toFixed(2)} s` : '—'}</td>
                <td>{formatTime(task.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
