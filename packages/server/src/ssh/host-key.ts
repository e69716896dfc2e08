/**
 * The SSH gateway's host key: the operator's (SANDBOXD_SSH_HOST_KEY_FILE), or an ed25519 key generated at the first
 * start and kept in DATA_DIR/ssh-host-key (0600), so clients see the same host key across restarts.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { sshFingerprint } from '../core/ssh-keys.ts';

const { utils } = ssh2;

export interface HostKey {
  /** The private key, OpenSSH format. */
  privateKey: Buffer;
  /** `SHA256:…` of its public half, as ssh shows it at the first connection. */
  fingerprint: string;
}

/** The host key from `sshHostKeyFile`, else the one kept in the data directory (made on first use). */
export function loadHostKey(options: { sshHostKeyFile: string | null; dataDir: string }): HostKey {
  const file = options.sshHostKeyFile ?? path.join(options.dataDir, 'ssh-host-key');
  let privateKey: Buffer;
  try {
    privateKey = fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || options.sshHostKeyFile) {
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

/**
 * Writes a new key whole to a file of its own, then links it into place: of two processes starting on one data
 * directory, the second (EEXIST) reads the first's key, which is complete from the moment it has its name.
 */
function generate(file: string): Buffer {
  const pair = generateParseableKey();
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, pair.private, { mode: 0o600 });
  try {
    fs.linkSync(temporary, file);
    return Buffer.from(pair.private);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file);
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/**
 * An ed25519 key pair that ssh2 reads back: its generator drops a leading zero byte of the public key in about
 * one key of 250 (measured: 12 of 3000), writing a file it then calls malformed; such a key is made again.
 */
function generateParseableKey(): { private: string } {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = utils.generateKeyPairSync('ed25519', { comment: 'sandboxd ssh gateway' });
    const parsed = utils.parseKey(pair.private);
    if (!(parsed instanceof Error) && !Array.isArray(parsed) && parsed.isPrivateKey()) return pair;
  }
  throw new Error('could not generate an SSH host key that ssh2 reads back');
}
