/**
 * Response headers that leave state in a browser for the whole origin: a VM's app may not set them on the
 * console's origin (api/preview/response-headers.ts). Written out here rather than imported, so that a header
 * dropped from the server's list fails the tests that use this one.
 */
export const ORIGIN_STATE_HEADERS: readonly string[] = [
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'service-worker-allowed',
  'refresh',
  'set-login',
  'strict-transport-security',
  'alt-svc',
  'nel',
  'report-to',
  'reporting-endpoints',
  'accept-ch',
  'critical-ch',
  'origin-agent-cluster',
];
