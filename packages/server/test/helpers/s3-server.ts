/**
 * A real S3-compatible server for tests: s3rver in a child process on 127.0.0.1 (`fixtures/s3rver.mjs`). It
 * speaks the S3 REST API the AWS SDK v3 uses (path-style), checks that the access key id is its own
 * (`S3RVER`), but does not verify V4 signatures.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 's3rver.mjs');

export interface TestS3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

/** Starts a server with `buckets` created, each empty. */
export async function startS3Server(buckets: string[], timeoutMs = 15_000): Promise<TestS3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-s3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', FIXTURE, directory, ...buckets], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk));
  const removeDirectory = () => fs.rmSync(directory, { recursive: true, force: true });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`s3rver did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onExit = (code: number | null) => fail(new Error(`s3rver exited with ${code}:\n${output}`));
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      removeDirectory();
      reject(error);
    };
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /\{"port":(\d+)\}/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(Number(match[1]));
    });
    child.once('exit', onExit);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      removeDirectory();
    },
  };
}
