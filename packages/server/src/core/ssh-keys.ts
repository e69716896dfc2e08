/**
 * SSH public keys: a user registers theirs (create, list, get, delete) and the SSH gateway lets that key log in
 * to the user's VMs. A key is parsed and checked here (ed25519, ECDSA, RSA of at least 2048 bits; never a private
 * key), stored in OpenSSH's one-line form without its comment, and known by its OpenSSH SHA-256 fingerprint.
 */
import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';

// ssh2 is CommonJS: its named exports are read off the default one.
const { utils } = ssh2;
import { recordAudit, systemActor, type AuditActor } from './audit.ts';
import type { Clock } from './clock.ts';
import { AppError, conflict, InputError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { Database } from '../store/database.ts';
import type { SshKeyRow } from '../store/schema.ts';
import { countSshKeys, deleteSshKey, findSshKey, findSshKeyByFingerprint, insertSshKey, listSshKeys, touchSshKey } from '../store/ssh-keys-store.ts';

/** Keys one user may register: enough for every machine they own, few enough that a lookup stays cheap. */
export const MAX_SSH_KEYS_PER_USER = 50;
const MAX_NAME_LENGTH = 200;
const MIN_RSA_BITS = 2048;
const ACCEPTED_TYPES = new Set(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa']);
// Writing last_used_at at every login of a busy key would be a write per login; a minute's precision is enough.
const TOUCH_INTERVAL_MS = 60_000;

export interface SshKey {
  id: number;
  userId: number;
  name: string;
  keyType: string;
  /** `<type> <base64>`, as in an authorized_keys line without the comment. */
  publicKey: string;
  fingerprint: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A public key that parsed and is acceptable. */
export interface ParsedPublicKey {
  type: string;
  /** The SSH wire encoding of the key (what a client offers and what the fingerprint hashes). */
  blob: Buffer;
  comment: string;
  fingerprint: string;
}

/** The fingerprint `ssh-keygen -l -E sha256` prints: `SHA256:` and the unpadded base64 of the blob's SHA-256. */
export function sshFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Parses one line of OpenSSH public key text; throws a 422 input error saying what is wrong. */
export function parsePublicKey(text: string): ParsedPublicKey {
  const invalid = (msg: string) => new InputError([{ loc: ['body', 'public_key'], msg, type: 'value_error' }]);
  const line = text.trim();
  if (line.includes('\n')) throw invalid('give one public key (one line of a .pub file), not several');
  const parsed = utils.parseKey(line);
  if (parsed instanceof Error || Array.isArray(parsed))
    throw invalid(
      `not an OpenSSH public key (the one line of a .pub file, e.g. "ssh-ed25519 AAAA… you@host"): ${parsed instanceof Error ? parsed.message : 'several keys'}`,
    );
  if (parsed.isPrivateKey()) throw invalid('this is a private key: register the public one (the .pub file) and keep the private key to yourself');
  if (!ACCEPTED_TYPES.has(parsed.type)) throw invalid(`key type ${parsed.type} is not accepted: use ed25519, ECDSA or RSA (at least ${MIN_RSA_BITS} bits)`);
  const blob = parsed.getPublicSSH();
  if (parsed.type === 'ssh-rsa') {
    const bits = rsaModulusBits(blob);
    if (bits < MIN_RSA_BITS) throw invalid(`this RSA key has ${bits} bits: RSA keys need at least ${MIN_RSA_BITS} (or use ed25519)`);
  }
  return { type: parsed.type, blob, comment: parsed.comment, fingerprint: sshFingerprint(blob) };
}

/** Bits of an ssh-rsa blob's modulus: the blob is string type, mpint e, mpint n. */
function rsaModulusBits(blob: Buffer): number {
  let offset = 0;
  const next = (): Buffer => {
    const length = blob.readUInt32BE(offset);
    const value = blob.subarray(offset + 4, offset + 4 + length);
    offset += 4 + length;
    return value;
  };
  next();
  next();
  const modulus = next();
  let start = 0;
  while (start < modulus.length && modulus[start] === 0) start += 1;
  if (start === modulus.length) return 0;
  return (modulus.length - start - 1) * 8 + (32 - Math.clz32(modulus[start]!));
}

export class SshKeyService {
  private readonly touchedAt = new Map<number, number>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {}

  /** Registers a key; 409 when the user has it already, 422 when it is not an acceptable public key. */
  async create(userId: number, input: { publicKey: string; name?: string | null | undefined }, actor: AuditActor = systemActor(userId)): Promise<SshKey> {
    const key = parsePublicKey(input.publicKey);
    const name = (input.name ?? '').trim() || key.comment.trim() || key.fingerprint;
    if (name.length > MAX_NAME_LENGTH) throw new AppError('BAD_REQUEST', `name must be at most ${MAX_NAME_LENGTH} characters`);
    const now = this.clock.now();
    const row = await this.database.db.transaction().execute(async (trx) => {
      if (await findSshKeyByFingerprint(trx, userId, key.fingerprint)) throw conflict(`you have registered this key already (${key.fingerprint})`);
      if ((await countSshKeys(trx, userId)) >= MAX_SSH_KEYS_PER_USER) {
        throw new AppError('QUOTA_EXCEEDED', `you have ${MAX_SSH_KEYS_PER_USER} SSH keys, the most an account may have: delete one you no longer use`);
      }
      const inserted = await insertSshKey(trx, {
        user_id: userId,
        name,
        key_type: key.type,
        public_key: `${key.type} ${key.blob.toString('base64')}`,
        fingerprint: key.fingerprint,
        created_at: now.toISOString(),
        last_used_at: null,
      });
      await recordEvent(trx, this.clock, {
        type: 'ssh_key.created',
        userId,
        subjectId: String(inserted.id),
        data: { ssh_key_id: inserted.id, name: inserted.name, fingerprint: inserted.fingerprint },
      });
      await recordAudit(trx, {
        actor,
        action: 'ssh_key.create',
        target: { type: 'ssh_key', id: String(inserted.id) },
        outcome: 'success',
        detail: { fingerprint: inserted.fingerprint },
        at: now,
      });
      return inserted;
    });
    this.notifier.committed();
    return toSshKey(row);
  }

  async list(userId: number): Promise<SshKey[]> {
    return (await listSshKeys(this.database.db, userId)).map(toSshKey);
  }

  async get(userId: number, id: number): Promise<SshKey> {
    const row = await findSshKey(this.database.db, userId, id);
    if (!row) throw notFound(`SSH key ${id}`);
    return toSshKey(row);
  }

  /** Deletes a key: it stops logging in at once (sessions already open stay until they close). */
  async delete(userId: number, id: number, actor: AuditActor = systemActor(userId)): Promise<SshKey> {
    const row = await this.database.db.transaction().execute(async (trx) => {
      const deleted = await deleteSshKey(trx, userId, id);
      if (!deleted) throw notFound(`SSH key ${id}`);
      await recordEvent(trx, this.clock, {
        type: 'ssh_key.deleted',
        userId,
        subjectId: String(deleted.id),
        data: { ssh_key_id: deleted.id, name: deleted.name, fingerprint: deleted.fingerprint },
      });
      await recordAudit(trx, {
        actor,
        action: 'ssh_key.delete',
        target: { type: 'ssh_key', id: String(deleted.id) },
        outcome: 'success',
        detail: { fingerprint: deleted.fingerprint },
        at: this.clock.now(),
      });
      return deleted;
    });
    this.notifier.committed();
    return toSshKey(row);
  }

  /** The user's registered key whose wire encoding is `blob`, or undefined (the gateway's lookup). */
  async findForLogin(userId: number, blob: Buffer): Promise<SshKey | undefined> {
    const row = await findSshKeyByFingerprint(this.database.db, userId, sshFingerprint(blob));
    // The fingerprint names the blob; comparing the stored key too costs nothing and removes any doubt. (The
    // client's algorithm name is not compared: an RSA key signs as rsa-sha2-512 but is stored as ssh-rsa.)
    if (!row || row.public_key.split(' ')[1] !== blob.toString('base64')) return undefined;
    return toSshKey(row);
  }

  /** Records that the key logged in (at most once a minute per key). */
  async markUsed(key: SshKey): Promise<void> {
    const now = this.clock.now();
    const last = this.touchedAt.get(key.id) ?? 0;
    if (now.getTime() - last < TOUCH_INTERVAL_MS) return;
    this.touchedAt.set(key.id, now.getTime());
    await touchSshKey(this.database.db, key.id, now.toISOString());
  }
}

function toSshKey(row: SshKeyRow): SshKey {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    keyType: row.key_type,
    publicKey: row.public_key,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
