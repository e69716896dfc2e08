/** Sign in with a username and password, or with an API key; the server answers with the session cookie. */
import { useState, type FormEvent } from 'react';
import { api, type ConsoleUser } from '../api.ts';
import { ErrorBanner } from '../ui.tsx';

export function SignInPage({ next, onSignedIn }: { next: string; onSignedIn: (user: ConsoleUser, next: string) => void }) {
  const [method, setMethod] = useState<'password' | 'key'>('password');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body =
      method === 'password' ? { username: String(form.get('username')), password: String(form.get('password')) } : { api_key: String(form.get('api_key')) };
    setBusy(true);
    try {
      onSignedIn(await api<ConsoleUser>('POST', '/v1/auth/session', body), next);
    } catch (reason) {
      setError(reason);
      setBusy(false);
    }
  };

  return (
    <main className="sign-in" id="main">
      <h1>Sign in to sandboxd</h1>
      <div role="tablist" aria-label="Sign-in method" className="tabs">
        <button type="button" role="tab" aria-selected={method === 'password'} onClick={() => setMethod('password')}>
          Password
        </button>
        <button type="button" role="tab" aria-selected={method === 'key'} onClick={() => setMethod('key')}>
          API key
        </button>
      </div>
      <ErrorBanner error={error} />
      <form onSubmit={submit} className="card">
        {method === 'password' ? (
          <>
            <label htmlFor="username">Username</label>
            <input id="username" name="username" autoComplete="username" required autoFocus />
            <label htmlFor="password">Password</label>
            <input id="password" name="password" type="password" autoComplete="current-password" required />
          </>
        ) : (
          <>
            <label htmlFor="api_key">API key</label>
            <input id="api_key" name="api_key" type="password" autoComplete="off" required autoFocus />
            <p className="muted">The key is checked once; the browser keeps a session cookie, never the key.</p>
          </>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
