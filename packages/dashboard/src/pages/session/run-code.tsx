/** Run code in the session's VM and show its output. */
import { useState, type FormEvent } from 'react';
import { api, type ExecuteResponse } from '../../api.ts';
import { ErrorBanner } from '../../ui.tsx';

export function RunCode({ sessionId, onRan }: { sessionId: string; onRan: () => void }) {
  const [result, setResult] = useState<ExecuteResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      setResult(
        await api<ExecuteResponse>('POST', '/execute', {
          session_id: sessionId,
          language: String(form.get('language')),
          code: String(form.get('code')),
          timeout: 120,
        }),
      );
      onRan();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" aria-labelledby="run-heading">
      <h2 id="run-heading">Run code</h2>
      <form onSubmit={submit}>
        <label htmlFor="language">Language</label>
        <select id="language" name="language" defaultValue="python">
          <option value="python">Python</option>
          <option value="bash">Bash</option>
        </select>
        <label htmlFor="code">Code</label>
        <textarea id="code" name="code" rows={5} spellCheck={false} required defaultValue="" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>
      </form>
      <ErrorBanner error={error} />
      {result ? (
        <div className="output" aria-live="polite">
          <p className="muted">
            exit {result.exit_code ?? '—'} · {result.execution_time?.toFixed(2) ?? '—'} s
          </p>
          <pre data-testid="stdout">{result.stdout}</pre>
          {result.stderr ? <pre className="stderr">{result.stderr}</pre> : null}
        </div>
      ) : null}
    </section>
  );
}
