/**
 * Where `sandbox login` sends the user (/cli-login?user_code=…): shows the code the terminal shows and approves
 * or denies the login as the signed-in user (POST /api/cli-auth/approve). Signing in first is handled by the
 * app shell, which comes back here afterwards.
 */
import { useState, type FormEvent } from 'react';
import { api, type ConsoleUser, type Schemas } from '../api.ts';
import { ErrorBanner } from '../ui.tsx';

type Decided = Schemas['CLIAuthApproveResponse'];

export function CliLoginPage({ userCode, user }: { userCode: string; user: ConsoleUser }) {
  const [code, setCode] = useState(userCode);
  const [decided, setDecided] = useState<Decided | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const decide = async (deny: boolean) => {
    setBusy(true);
    setError(null);
    try {
      setDecided(await api<Decided>('POST', '/api/cli-auth/approve', { user_code: code.trim(), ...(deny ? { deny: true } : {}) }));
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  if (decided) {
    const approved = decided.status === 'approved' || decided.status === 'consumed';
    return (
      <section className="narrow">
        <h1>{approved ? 'Login approved' : 'Login denied'}</h1>
        <p role="status">
          {approved
            ? `The command line on ${decided.hostname} is signed in as ${user.username} (or will be in a few seconds). You can close this page.`
            : `The login from ${decided.hostname} was denied. No key was issued.`}
        </p>
      </section>
    );
  }

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void decide(false);
  };

  return (
    <section className="narrow">
      <h1>Approve a command-line login</h1>
      <ErrorBanner error={error} />
      <form className="card" onSubmit={onSubmit}>
        <label htmlFor="user_code">Code shown by your terminal</label>
        <input id="user_code" className="code" value={code} onChange={(event) => setCode(event.target.value)} maxLength={40} required />
        <p className="muted">
          Approve only if you started <code>sandbox login</code> yourself and your terminal shows this code. Approving gives that machine a new API key to the
          account <strong>{user.username}</strong>.
        </p>
        <div className="row">
          <button type="submit" className="primary" disabled={busy || !code.trim()}>
            Approve
          </button>
          <button type="button" disabled={busy || !code.trim()} onClick={() => void decide(true)}>
            Deny
          </button>
        </div>
      </form>
    </section>
  );
}
