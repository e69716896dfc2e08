/**
 * `POST /v1/files/extract?path=&gzip=0|1`: extract a tar stream (the body) into a directory with the guest's
 * `tar`, created if missing. Ownership is not taken from the archive (`--no-same-owner`): archives are built on
 * the host, whose user ids mean nothing in the guest.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import type { ExtractResponse } from '../protocol/messages.ts';
import { queryGuestPath } from './guest-path.ts';

const MAX_STDERR_BYTES = 64 * 1024;

/** Handler of `POST /v1/files/extract`. */
export async function extractRoute({ stream, url }: RouteRequest): Promise<void> {
  const path = queryGuestPath(url);
  const gzip = url.searchParams.get('gzip') === '1';
  const started = performance.now();
  await mkdir(path, { recursive: true });
  const tar = spawn('tar', ['-x', '-f', '-', '-C', path, '--no-same-owner', ...(gzip ? ['-z'] : [])], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    tar.once('error', reject);
    tar.once('close', (code) => resolve(code));
  });
  // tar may stop reading early (a corrupt archive); its exit status is the error to report, not the EPIPE.
  const fed = pipeline(stream, tar.stdin).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  });
  stream.once('close', () => {
    if (tar.exitCode === null) tar.kill('SIGKILL');
  });
  const [code] = await Promise.all([exited, fed]);
  if (code !== 0) throw new AgentFailure('EXTRACT_FAILED', `tar failed (status ${code}): ${stderr.trim() || 'no message'}`, path);
  const answer: ExtractResponse = { path, durationMs: performance.now() - started };
  replyJson(stream, 200, answer);
}
