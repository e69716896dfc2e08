/** The API path of one session (its files, its terminals), shared by the panels of the session page. */
export function sessionPath(sessionId: string, rest = ''): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`;
}
