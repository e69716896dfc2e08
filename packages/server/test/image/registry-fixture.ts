// test-lane: heavy (a container registry process; skopeo copies): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * Test fixture: a real container registry (Debian's docker-registry, the CNCF distribution registry) on a free
 * loopback port with its storage in a temporary directory, optionally behind htpasswd basic authentication, and
 * helpers to push OCI layouts into it with skopeo.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../src/image/run-command.ts';
import { freePort } from '../helpers/ports.ts';

/** A running registry. */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, as a reference names it. */
  host: string;
  /** Credentials it accepts, when it has basic authentication. */
  credentials?: { username: string; password: string };
  /** What the registry printed (for failures). */
  log(): string;
  stop(): Promise<void>;
}

/** Starts a registry; with `credentials`, every request needs them (htpasswd, bcrypt). */
export async function startRegistry(options: { credentials?: { username: string; password: string } } = {}): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const lines = ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`, 'http:', `  addr: ${host}`];
  if (options.credentials) {
    // -i: the password comes on stdin, not on htpasswd's command line.
    await runCommand('htpasswd', ['-B', '-i', '-c', join(dir, 'htpasswd'), options.credentials.username], { input: options.credentials.password });
    lines.push('auth:', '  htpasswd:', '    realm: sandboxd-test', `    path: ${join(dir, 'htpasswd')}`);
  }
  await writeFile(join(dir, 'config.yml'), `${lines.join('\n')}\n`);
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let running = true;
  void exited.then(() => {
    running = false;
  });
  const stop = async (): Promise<void> => {
    if (running) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await fetch(`http://${host}/v2/`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200 || status === 401) break;
      if (!running || Date.now() > deadline) throw new Error(`the registry on ${host} did not come up: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, ...(options.credentials ? { credentials: options.credentials } : {}), log: () => output, stop };
}

/**
 * Pushes the image tagged `tag` in the OCI layout `layoutDir` to `registry` as `repository:tag`; resolves its
 * manifest digest. Credentials go through a 0600 auth file.
 */
export async function pushImage(registry: TestRegistry, layoutDir: string, tag: string, repository: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-push-'));
  try {
    const args = ['copy', '--dest-tls-verify=false', '--digestfile', join(dir, 'digest')];
    if (registry.credentials) {
      const auth = Buffer.from(`${registry.credentials.username}:${registry.credentials.password}`).toString('base64');
      await writeFile(join(dir, 'auth.json'), JSON.stringify({ auths: { [registry.host]: { auth } } }), { mode: 0o600 });
      args.push('--dest-authfile', join(dir, 'auth.json'));
    }
    await runCommand('skopeo', [...args, `oci:${layoutDir}:${tag}`, `docker://${registry.host}/${repository}:${tag}`]);
    return (await readFile(join(dir, 'digest'), 'utf8')).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
