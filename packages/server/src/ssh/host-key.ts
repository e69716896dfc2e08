/**
 * The SSH gateway's host key: the operator's (SANDBOXD_SSH_HOST_KEY_FILE), or an ed25519 key generated at the first
 * start and kept in DATA_DIR/ssh-host-key (0600), so clients see the same host key across restarts.
 */
import fs from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import type { Config } from '../config.ts';
import { sshFingerprint } from '../core/ssh-keys.ts';

const { utils } = ssh2;

export interface HostKey {
  /** The private key, OpenSSH format. */
  privateKey: Buffer;
  /** `SHA256:…` of its public half, as ssh shows it at the first connection. */
  fingerprint: string;
}

export function loadHostKey(config: Pick<Config, 'sshHostKeyFile' | 'dataDir'>): HostKey {
  const file = config.sshHostKeyFile ?? path.join(config.dataDir, 'ssh-host-key');
  let privateKey: Buffer;
  try {
    privateKey = fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || config.sshHostKeyFile) {
      throw new Error(`SANDBOXD_SSH_HOST_KEY_FILE: cannot read the SSH host key ${file}: ${(error as Error).message}`, { cause: error });
    }
    privateKey = generate(file);
  }
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error || Array.isArray(parsed) || !parsed.isPrivateKey()) {
    throw new Error(`SANDBOXD_SSH_HOST_KEY_FILE: ${file} is not an unencrypted OpenSSH private key`);
  }
  return { privateKey, fingerprint: sshFingerprint(parsed.getPublicSSH()) };
}

/** Writes a new key with `wx`: of two processes starting on one data directory, the second reads the first's key. */
function generate(file: string): Buffer {
  const pair = utils.generateKeyPairSync('ed25519', { comment: 'sandboxd ssh gateway' });
  try {
    fs.writeFileSync(file, pair.private, { mode: 0o600, flag: 'wx' });
    return Buffer.from(pair.private);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file);
    throw error;
  }
}
