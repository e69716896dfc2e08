/**
 * Run code in the session's VM: Bash output appears as it is printed, Python output (and its figures and tables)
 * when the run ends; Stop cancels the run and leaves the VM running.
 */
import { useState, type FormEvent } from 'react';
import type { RunLanguage } from './run-drivers.ts';
import { RunOutput } from './run-output.tsx';
import { useRun } from './use-run.ts';

export function RunCode({ sessionId, onRan }: { sessionId: string; onRan: () => void }) {
  const { run, start, stop } = useRun(sessionId, onRan);
  const [language, setLanguage] = useState<RunLanguage>('python');
  const busy = run !== null && run.phase !== 'ended';
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    start(language, String(new FormData(event.currentTarget).get('code')));
  };
  return (
    <section className="card" aria-labelledby="run-heading">
      <h2 id="run-heading">Run code</h2>
      <form onSubmit={submit}>
        <label htmlFor="language">Language</label>
        <select id="language" name="language" value={language} onChange={(event) => setLanguage(event.target.value as RunLanguage)}>
          <option value="python">Python (variables persist)</option>
          <option value="bash">Bash (output live)</option>
        </select>
        <label htmlFor="code">Code</label>
        <textarea
          id="code"
          name="code"
          rows={5}
          spellCheck={false}
          required
          defaultValue=""
          onKeyDown={(event) => {
            // Ctrl+Enter (⌘+Enter) runs, as in notebooks.
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              event.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <div className="row form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
          {run && busy ? (
            <button type="button" className="danger" onClick={stop} disabled={run.phase !== 'running'}>
              {run.phase === 'stopping' ? 'Stopping…' : 'Stop'}
            </button>
          ) : null}
        </div>
      </form>
      {run ? <RunOutput run={run} /> : null}
    </section>
  );
}
