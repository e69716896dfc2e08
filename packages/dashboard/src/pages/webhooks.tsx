/**
 * Webhooks: the caller's endpoints (add, send a test event, rotate the signing secret, delete) and the
 * deliveries, each with its attempts and a replay button.
 */
import { useState, type FormEvent } from 'react';
import { api, withQuery, type paths, type Schemas, type WebhookDelivery, type WebhookEndpoint } from '../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../ui.tsx';

type DeliveryDetail = paths['/v1/webhooks/deliveries/{delivery_id}']['get']['responses'][200]['content']['application/json'];

function Attempts({ deliveryId }: { deliveryId: string }) {
  const detail = useLoad(() => api<DeliveryDetail>('GET', `/v1/webhooks/deliveries/${encodeURIComponent(deliveryId)}`), [deliveryId]);
  if (detail.error) return <ErrorBanner error={detail.error} />;
  return (
    <ol className="attempts">
      {(detail.data?.attempts ?? []).map((attempt) => (
        <li key={attempt.attempt}>
          Attempt {attempt.attempt}: {attempt.succeeded ? 'delivered' : 'failed'} · HTTP {attempt.http_status ?? '—'} · {attempt.duration_ms} ms ·{' '}
          {formatTime(attempt.started_at)}
          {attempt.error ? <span className="warn"> · {attempt.error}</span> : null}
        </li>
      ))}
      {detail.data && detail.data.attempts.length === 0 ? <li>No attempt yet.</li> : null}
    </ol>
  );
}

function Deliveries({ version }: { version: number }) {
  const deliveries = useLoad(() => api<Schemas['WebhookDeliveryList']>('GET', withQuery('/v1/webhooks/deliveries', { limit: 50 })), [version]);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const replay = async (delivery: WebhookDelivery) => {
    setError(null);
    try {
      await api('POST', `/v1/webhooks/deliveries/${encodeURIComponent(delivery.id)}/replay`);
      deliveries.reload();
    } catch (reason) {
      setError(reason);
    }
  };
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">
        Deliveries{' '}
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </h2>
      <ErrorBanner error={deliveries.error ?? error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">HTTP</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(deliveries.data?.items ?? []).map((delivery) => (
              <tr key={delivery.id} data-event-type={delivery.event_type} data-status={delivery.status}>
                <td>
                  <code>{delivery.event_type}</code>
                  {open === delivery.id ? <Attempts deliveryId={delivery.id} /> : null}
                </td>
                <td>
                  <code>{delivery.endpoint_id}</code>
                </td>
                <td>
                  <span className={`status ${delivery.status}`}>{delivery.status}</span>
                </td>
                <td>{delivery.final_http_status ?? '—'}</td>
                <td>{formatTime(delivery.created_at)}</td>
                <td className="row">
                  <button type="button" onClick={() => setOpen(open === delivery.id ? null : delivery.id)} aria-expanded={open === delivery.id}>
                    Attempts
                  </button>
                  <button type="button" onClick={() => void replay(delivery)}>
                    Replay
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function WebhooksPage() {
  const endpoints = useLoad(() => api<WebhookEndpoint[]>('GET', '/v1/webhooks/endpoints'), []);
  const [secret, setSecret] = useState<{ endpoint: string; secret: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const list = endpoints.data ?? [];

  const act = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
      endpoints.reload();
      setVersion((n) => n + 1);
    } catch (reason) {
      setError(reason);
    }
  };

  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const patterns = String(form.get('event_patterns') ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const description = String(form.get('description') ?? '').trim();
    void act(async () => {
      const created = await api<WebhookEndpoint>('POST', '/v1/webhooks/endpoints', {
        url: String(form.get('url')),
        ...(patterns.length ? { event_patterns: patterns } : {}),
        ...(description ? { description } : {}),
      });
      if (created.secret) setSecret({ endpoint: created.id, secret: created.secret });
      formElement.reset();
    });
  };

  return (
    <section>
      <h1>Webhooks</h1>
      <ErrorBanner error={endpoints.error ?? error} />
      <form className="card grid-form" onSubmit={create} aria-label="Add a webhook endpoint">
        <h2>Add an endpoint</h2>
        <label htmlFor="url">URL</label>
        <input id="url" name="url" type="url" required placeholder="https://example.com/hooks/sandboxd" />
        <label htmlFor="event_patterns">Events</label>
        <input id="event_patterns" name="event_patterns" placeholder="* (all), or vm.*, execution.completed" />
        <label htmlFor="wh_description">Description</label>
        <input id="wh_description" name="description" maxLength={500} />
        <button type="submit" className="primary">
          Add endpoint
        </button>
      </form>
      {secret ? (
        <div className="banner success" role="status">
          Signing secret of {secret.endpoint} (shown once): <code className="secret">{secret.secret}</code>
        </div>
      ) : null}
      <h2>Endpoints</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Enabled</th>
              <th scope="col">Verified</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((endpoint) => (
              <tr key={endpoint.id} data-endpoint-id={endpoint.id}>
                <td>
                  <code>{endpoint.url}</code>
                  <div className="muted">{endpoint.description}</div>
                </td>
                <td>{endpoint.event_patterns.join(', ')}</td>
                <td>{endpoint.enabled ? 'yes' : 'no'}</td>
                <td>{formatTime(endpoint.verified_at)}</td>
                <td className="row">
                  <button type="button" onClick={() => void act(async () => void (await api('POST', `/v1/webhooks/endpoints/${endpoint.id}/test`)))}>
                    Send test
                  </button>
                  <button
                    type="button"
                    onClick={() =>
                      void act(async () => {
                        const rotated = await api<Schemas['WebhookSecretRotation']>('POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`);
                        setSecret({ endpoint: endpoint.id, secret: rotated.secret });
                      })
                    }
                  >
                    Rotate secret
                  </button>
                  <button
                    type="button"
                    className="danger"
                    onClick={() => void act(async () => void (await api('DELETE', `/v1/webhooks/endpoints/${endpoint.id}`)))}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Deliveries version={version} />
    </section>
  );
}
