/**
 * The addresses under which a VM port is served: through the API's path (`/v1/app/{session_id}/{port}/`) and
 * by host name (`{vm_id}-{port}.<app domain>`, for apps that must live at `/`). Both go through the preview
 * proxy; nothing on the host listens per VM.
 */

/** A VM port named by the host name of a request, e.g. `vm-abc…-3000.apps.example.com`. */
export interface HostTarget {
  vmId: string;
  port: number;
}

export class AppUrls {
  private readonly base: URL;

  constructor(
    publicUrl: string,
    /** Lower-case domain without a trailing dot. */
    readonly appDomain: string,
  ) {
    this.base = new URL(publicUrl);
  }

  /** `https://api.example.com/v1/app/<session>/<port>/` */
  pathUrl(sessionId: string, port: number): string {
    return `${this.base.origin}${this.base.pathname.replace(/\/$/, '')}${this.pathPrefix(sessionId, port)}/`;
  }

  /** `wss://api.example.com` (or `ws://…`): the public URL's origin and base path for WebSocket addresses. */
  websocketBase(): string {
    return `${this.base.protocol === 'https:' ? 'wss:' : 'ws:'}//${this.base.host}${this.base.pathname.replace(/\/$/, '')}`;
  }

  /** The API path of a preview, without a trailing slash. */
  pathPrefix(sessionId: string, port: number): string {
    return `/v1/app/${encodeURIComponent(sessionId)}/${port}`;
  }

  /** `https://<vm_id>-<port>.<app domain>[:public port]/`: the scheme and port of the public URL. */
  directUrl(vmId: string, port: number): string {
    const portSuffix = this.base.port ? `:${this.base.port}` : '';
    return `${this.base.protocol}//${vmId}-${port}.${this.appDomain}${portSuffix}/`;
  }

  /** `https://<custom domain>[:public port]/`: a verified custom domain serves its port at `/`, like a direct URL. */
  customDomainUrl(domain: string): string {
    const portSuffix = this.base.port ? `:${this.base.port}` : '';
    return `${this.base.protocol}//${domain}${portSuffix}/`;
  }

  /**
   * `https://<name>--<handle>.<app domain>[:public port]/`: a deployed app (core/apps). The `--` keeps app hosts
   * apart from `{vm_id}-{port}` hosts, whose first label never holds two hyphens in a row.
   */
  appUrl(hostLabel: string): string {
    const portSuffix = this.base.port ? `:${this.base.port}` : '';
    return `${this.base.protocol}//${hostLabel}.${this.appDomain}${portSuffix}/`;
  }

  /** The app host label (`<name>--<handle>`) a `Host` header names, or null. */
  parseAppHost(hostHeader: string | undefined): string | null {
    if (!hostHeader) return null;
    const host = hostHeader.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${this.appDomain}`;
    if (!host.endsWith(suffix)) return null;
    const label = host.slice(0, -suffix.length);
    return /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?--[a-z0-9](?:[a-z0-9-]{0,19}[a-z0-9])?$/.test(label) ? label : null;
  }

  /** The API's own host name (from the public URL), lower case: never a custom domain. */
  get apiHostname(): string {
    return this.base.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  }

  /** Whether links should set `Secure` cookies. */
  get secure(): boolean {
    return this.base.protocol === 'https:';
  }

  /** The VM port a `Host` header names, or null when it is not a preview host (then the API serves it). */
  parseHost(hostHeader: string | undefined): HostTarget | null {
    if (!hostHeader) return null;
    const host = hostHeader.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${this.appDomain}`;
    if (!host.endsWith(suffix)) return null;
    const match = /^(vm-[a-z2-7]{16})-(\d{1,5})$/.exec(host.slice(0, -suffix.length));
    if (!match) return null;
    const port = Number(match[2]);
    if (port < 1 || port > 65535) return null;
    return { vmId: match[1]!, port };
  }
}
