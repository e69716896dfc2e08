/** Reading request bodies, and the small checks routes apply to decoded JSON. */
import type { Readable } from 'node:stream';
import { AgentFailure } from './agent-failure.ts';

/** Largest JSON body a route accepts (Python code, env maps). */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/** Reads the whole body as JSON; an empty body is `{}`. */
export async function readJsonBody(stream: Readable, maxBytes = MAX_JSON_BODY_BYTES): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new AgentFailure('BAD_REQUEST', `request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  return parseJsonObject(Buffer.concat(chunks, size));
}

/** Parses bytes that must hold a JSON object. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new AgentFailure('BAD_REQUEST', 'request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AgentFailure('BAD_REQUEST', 'request body must be a JSON object');
  return value as Record<string, unknown>;
}

/** A required string field. */
export function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string') throw new AgentFailure('BAD_REQUEST', `"${field}" must be a string`);
  return value;
}

/** An optional string field. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new AgentFailure('BAD_REQUEST', `"${field}" must be a string`);
  return value;
}

/** An optional boolean field. */
export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new AgentFailure('BAD_REQUEST', `"${field}" must be a boolean`);
  return value;
}

/** An optional integer field within [min, max]. */
export function optionalInteger(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new AgentFailure('BAD_REQUEST', `"${field}" must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** An optional array of strings. */
export function optionalStringArray(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))
    throw new AgentFailure('BAD_REQUEST', `"${field}" must be an array of strings`);
  return value as string[];
}

/** An optional string → string map. */
export function optionalStringMap(body: Record<string, unknown>, field: string): Record<string, string> | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((item) => typeof item === 'string')) {
    throw new AgentFailure('BAD_REQUEST', `"${field}" must be an object of strings`);
  }
  return value as Record<string, string>;
}
