/** The server-rendered approval page of the command-line login: plain HTML, no script, escaped values. */
import type { CliAuthDescription } from '../../../core/cli-auth.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

export interface PageState {
  csrfToken: string;
  /** As typed or given in the link; refilled into the form. */
  userCode: string;
  /** The login behind the code, when it was found. */
  login: CliAuthDescription | null;
  username?: string;
  /** A problem to show above the form. */
  error?: string;
  /** A final message (approved, denied, expired…): no form then. */
  done?: { title: string; message: string };
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}.code{font:700 1.6rem ui-monospace,monospace;letter-spacing:.1em}
.box{border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0;background:#f6f8fa}
.error{border-color:#cf222e;background:#ffebe9}label{display:block;margin:.75rem 0 .25rem}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
button{font:inherit;padding:.5rem 1rem;margin:1rem .5rem 0 0;cursor:pointer}.approve{background:#1f883d;color:#fff;border:0;border-radius:6px}
.muted{color:#57606a;font-size:.9rem}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} · sandboxd</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

function describeLogin(login: CliAuthDescription): string {
  const from = login.requesterIp ? ` from ${escapeHtml(login.requesterIp)}` : '';
  return `<div class="box"><div class="code">${escapeHtml(login.userCode)}</div>
<div>Command line on <strong>${escapeHtml(login.hostname)}</strong>${from}, started ${escapeHtml(login.createdAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}.</div>
<div class="muted">Approve only if you started <code>sandbox login</code> yourself and your terminal shows this code. Approving gives that machine a new API key to your account.</div></div>`;
}

export function renderApprovalPage(state: PageState): string {
  if (state.done) return layout(state.done.title, `<p>${escapeHtml(state.done.message)}</p>`);
  const error = state.error ? `<div class="box error" role="alert">${escapeHtml(state.error)}</div>` : '';
  const login = state.login ? describeLogin(state.login) : '';
  const codeField = state.login
    ? `<input type="hidden" name="user_code" value="${escapeHtml(state.login.userCode)}">`
    : `<label for="user_code">Code shown by the command line</label>
<input type="text" id="user_code" name="user_code" value="${escapeHtml(state.userCode)}" placeholder="BCDF-GHJK" autocomplete="off" autocapitalize="characters" required>`;
  return layout(
    'Approve a command-line login',
    `${error}${login}
<form method="post" action="/cli-auth">
<input type="hidden" name="csrf_token" value="${escapeHtml(state.csrfToken)}">
${codeField}
<label for="username">Username</label>
<input type="text" id="username" name="username" value="${escapeHtml(state.username ?? '')}" autocomplete="username" required>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}
