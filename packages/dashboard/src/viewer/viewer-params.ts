/**
 * What the desktop viewer page reads from its own address: the VNC token and view-only flag from the fragment
 * (`#token=…&view_only=…`, which browsers never send to a server, so no request log or Referer sees the
 * token), and its relay's WebSocket address from the page's path (`…/v1/app/{id}/6080/vnc.html` →
 * `…/v1/computeruse/{id}/vnc/websockify`): never from anything a link could point elsewhere.
 */
export interface ViewerParams {
  websocketUrl: string;
  viewOnly: boolean;
}

const PAGE_PATH = /^(.*)\/app\/([^/]+)\/[0-9]+\/[^/]*$/;

/** The viewer's parameters, or null when the address does not carry them (an old or cut link). */
export function viewerParams(location: { protocol: string; host: string; pathname: string; hash: string }): ViewerParams | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = fragment.get('token');
  const page = PAGE_PATH.exec(location.pathname);
  if (!token || !page) return null;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const websocketUrl = `${scheme}//${location.host}${page[1]}/computeruse/${page[2]}/vnc/websockify?token=${encodeURIComponent(token)}`;
  return { websocketUrl, viewOnly: fragment.get('view_only') === 'true' };
}
