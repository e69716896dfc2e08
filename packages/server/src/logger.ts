/** The process's pino options: JSON lines, secrets redacted wherever they appear in a logged object. */
import type { LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.api_key',
  '*.apiKey',
  '*.full_key',
  '*.fullKey',
  '*.access_token',
  '*.secret',
  '*.env',
  'password',
  'api_key',
  'secret',
  'env',
];

export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
}
