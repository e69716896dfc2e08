/**
 * Settings of what the server tells its operators beyond the log: OpenTelemetry traces (off unless an OTLP endpoint
 * is set). They keep OpenTelemetry's own variable names (the SDK specification's `OTEL_*`), so a collector set up
 * for any other service configures this one the same way; the metrics need no setting (the admin listener serves them).
 */
import { text, type Setting, type SettingValues } from './kit.ts';

/** An http(s) URL, without a trailing slash. */
function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
  return url.toString().replace(/\/$/, '');
}

/** `key=value,key2=value2` with URL-encoded values (the W3C Baggage form the OTLP exporter specification uses). */
function headerList(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const name = at > 0 ? part.slice(0, at).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new Error(`expected name=value pairs separated by commas, got "${part.trim()}"`);
    headers[name.toLowerCase()] = decodeURIComponent(part.slice(at + 1).trim());
  }
  return headers;
}

/** The settings of the observability block, by name (each name is unique across the blocks). */
export const observabilitySettings = {
  otlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    description:
      'Where to send traces (OTLP over HTTP, JSON), the whole URL (e.g. http://collector:4318/v1/traces); tracing is off when neither this nor OTEL_EXPORTER_OTLP_ENDPOINT is set',
    parse: httpUrl,
    fallback: () => '',
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description:
      'Base URL of an OTLP/HTTP collector (e.g. http://collector:4318): traces go to <base>/v1/traces unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set',
    parse: httpUrl,
    fallback: () => '',
  },
  otlpHeaders: {
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    description: 'Headers sent with every trace export, name=value pairs separated by commas, values URL-encoded (e.g. authorization=Bearer%20abc)',
    parse: headerList,
    fallback: () => ({}) as Record<string, string>,
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    description: 'The service.name of the traces this server sends',
    parse: text,
    fallback: () => 'sandboxd',
  },
} satisfies Record<string, Setting<unknown>>;

/** The observability block of the configuration. */
export type ObservabilityConfig = SettingValues<typeof observabilitySettings>;

/** Where traces go (the signal's own endpoint, else the base one's `/v1/traces`), or null when tracing is off. */
export function tracesUrlOf(config: ObservabilityConfig): string | null {
  if (config.otlpTracesEndpoint) return config.otlpTracesEndpoint;
  if (config.otlpEndpoint) return `${config.otlpEndpoint}/v1/traces`;
  return null;
}
