/**
 * The vault key: what vault secrets and the vault CA's private key are sealed under. It is never stored beside
 * what it seals (the database), so that a dump or a backup of the database alone opens nothing:
 *
 * 1. SANDBOXD_VAULT_KEY when it is set (from the environment, or from the `cluster.json` that
 *    `sandboxd node join` writes: the join token carries it);
 * 2. else DATA_DIR/vault.key (mode 0600), generated at the first start of a deployment.
 *
 * The database holds only the key's fingerprint (`vault.key_id`, an HKDF output that opens nothing), so that a
 * node with another key, or none, is told so instead of failing to open secrets one by one: such a node
 * refuses vault use with VAULT_KEY_UNAVAILABLE. A second node of a cluster without the key never generates one
 * of its own (the deployment's fingerprint exists).
 *
 * Until 2026-11 the default key was derived from the auth secret, which the store itself holds. At the first
 * start with a fingerprint-less store, values and the CA key sealed under that old default are re-sealed under
 * the key in use, once, in one transaction that also records the fingerprint.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors.ts';
import { SecretBox, VAULT_KEY_INFO } from '../secrets/secret-box.ts';
import type { Database, Executor } from '../../store/database.ts';
import { readSetting } from '../../store/settings-store.ts';

/** The associated data a secret is sealed with: a sealed value copied onto another secret's row does not open. */
export const sealingContext = (vaultId: string, name: string) => `vault/${vaultId}/${name}`;

/** What vault secrets are sealed and opened with. */
export interface VaultSealer {
  seal(plaintext: string, associatedData: string): string;
  open(sealed: string, associatedData: string): string;
}

/** The file the generated key is kept in, in the data directory. */
export const VAULT_KEY_FILE = 'vault.key';
const FINGERPRINT_SETTING = 'vault.key_id';
const CA_SETTING = 'vault.ca';
const CA_SEALING_CONTEXT = 'vault.ca';

export type VaultKeySource = 'SANDBOXD_VAULT_KEY' | 'file' | 'generated' | 'none';

/** What the start-up re-seal of an old-format store did. */
export interface VaultResealReport {
  /** Secrets (and the CA key, counted here too) moved from the old default key to the key in use. */
  resealed: number;
  /** Sealed values neither key opens (they were unreadable before, too: set them again). */
  unreadable: number;
}

/** The fingerprint of a key, as stored: it identifies the key and opens nothing. */
export function vaultKeyFingerprint(material: string): string {
  return Buffer.from(hkdfSync('sha256', material, 'sandboxd', 'sandboxd vault key id v1', 16)).toString('base64url');
}

/** The vault's sealer on this node, or why there is none. */
export class VaultKey implements VaultSealer {
  constructor(
    private readonly box: SecretBox | null,
    readonly source: VaultKeySource,
    /** The key file (when it came from or went to one). */
    readonly file: string | null,
    /** Why vault use is refused on this node; null when the key is there. */
    readonly problem: string | null,
    readonly resealed: VaultResealReport = { resealed: 0, unreadable: 0 },
  ) {}

  get available(): boolean {
    return this.box !== null && this.problem === null;
  }

  /** Throws VAULT_KEY_UNAVAILABLE when this node cannot seal or open vault secrets. */
  check(): void {
    if (!this.available) throw new AppError('VAULT_KEY_UNAVAILABLE', `the vault cannot be used on this node: ${this.problem}`);
  }

  seal(plaintext: string, associatedData: string): string {
    this.check();
    return this.box!.seal(plaintext, associatedData);
  }

  open(sealed: string, associatedData: string): string {
    this.check();
    return this.box!.open(sealed, associatedData);
  }

  /** A line for the start-up log: which key source is used. */
  describe(): string {
    if (!this.available) return `vault key: none usable, vault use is refused (${this.problem})`;
    const reseal =
      this.resealed.resealed > 0 ? `; ${this.resealed.resealed} sealed values moved from the old default key (derived from the auth secret) to it` : '';
    if (this.source === 'SANDBOXD_VAULT_KEY') return `vault key: SANDBOXD_VAULT_KEY${reseal}`;
    return `vault key: ${this.file} (${this.source === 'generated' ? 'generated now, mode 0600; back it up, apart from the database' : 'mode 0600'})${reseal}`;
  }
}

/** Reads DATA_DIR/vault.key; null when there is none. */
function readKeyFile(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = text.trim();
  if (key.length < 32)
    throw new Error(`${file} does not hold a vault key (at least 32 characters): restore it from a backup, or remove it only if no secret was ever stored`);
  // Whoever put it there with looser permissions: it is tightened, as the file was made 0600.
  if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  return key;
}

/** The vault key this node has (SANDBOXD_VAULT_KEY, else DATA_DIR/vault.key), without making one; null: none. */
export function readVaultKeyMaterial(config: { vaultKey: string | null; dataDir: string }): string | null {
  return config.vaultKey ?? readKeyFile(path.join(config.dataDir, VAULT_KEY_FILE));
}

/** Writes a new key into `file` (0600, created exclusively: a concurrent start loses and reads the winner's). */
function generateKeyFile(file: string): string | null {
  const key = randomBytes(48).toString('base64url');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  try {
    fs.writeSync(fd, `${key}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return key;
}

/** The key material this node has: configured, in the file, or generated now (only for a deployment that has none yet). */
async function keyMaterial(configured: string | null, file: string, database: Database): Promise<{ material: string | null; source: VaultKeySource }> {
  if (configured) return { material: configured, source: 'SANDBOXD_VAULT_KEY' };
  const stored = readKeyFile(file);
  if (stored) return { material: stored, source: 'file' };
  // A deployment that has a key already (its fingerprint): this node must be given it, not make another.
  if ((await readSetting(database.db, FINGERPRINT_SETTING)) !== undefined) return { material: null, source: 'none' };
  const generated = generateKeyFile(file);
  return generated ? { material: generated, source: 'generated' } : { material: readKeyFile(file), source: 'file' };
}

/**
 * Re-seals under `box` what the old default key (`legacy`) sealed: each secret and the CA key that `box` does not
 * open but `legacy` does.
 */
async function reseal(db: Executor, box: SecretBox, legacy: SecretBox): Promise<VaultResealReport> {
  const report: VaultResealReport = { resealed: 0, unreadable: 0 };
  const moved = (sealed: string, context: string): string | null => {
    try {
      box.open(sealed, context);
      return null; // already under the key in use
    } catch {
      // not under the key in use: maybe under the old default
    }
    try {
      const value = legacy.open(sealed, context);
      report.resealed++;
      return box.seal(value, context);
    } catch {
      report.unreadable++;
      return null;
    }
  };
  const secrets = await db.selectFrom('vault_secrets').select(['vault_id', 'name', 'sealed_value']).execute();
  for (const secret of secrets) {
    const sealed = moved(secret.sealed_value, sealingContext(secret.vault_id, secret.name));
    if (sealed)
      await db.updateTable('vault_secrets').set({ sealed_value: sealed }).where('vault_id', '=', secret.vault_id).where('name', '=', secret.name).execute();
  }
  const ca = await readSetting(db, CA_SETTING);
  if (ca !== undefined) {
    const parsed = JSON.parse(ca) as { cert_pem: string; sealed_key: string };
    const sealed = moved(parsed.sealed_key, CA_SEALING_CONTEXT);
    if (sealed)
      await db
        .updateTable('settings')
        .set({ value: JSON.stringify({ ...parsed, sealed_key: sealed }) })
        .where('name', '=', CA_SETTING)
        .execute();
  }
  return report;
}

/**
 * The vault key of this node (see the module comment). `legacySecret`: the auth secret the old default key was
 * derived from, for the one-time re-seal.
 */
export async function resolveVaultKey(options: { configuredKey: string | null; dataDir: string; legacySecret: string }, database: Database): Promise<VaultKey> {
  const file = path.join(options.dataDir, VAULT_KEY_FILE);
  const { material, source } = await keyMaterial(options.configuredKey, file, database);
  const fileOrNull = source === 'SANDBOXD_VAULT_KEY' ? null : file;
  if (material === null) {
    return new VaultKey(
      null,
      'none',
      file,
      `this deployment has a vault key and this node does not: set SANDBOXD_VAULT_KEY to it (it is the ${VAULT_KEY_FILE} in the data directory of the node that made it), or join this node with a token from \`sandboxd cluster token\``,
    );
  }
  const box = new SecretBox(material, VAULT_KEY_INFO);
  const fingerprint = vaultKeyFingerprint(material);
  const outcome = await database.db.transaction().execute(async (trx) => {
    // Claimed first: a node starting at the same time blocks here until this commits, then finds it taken.
    const inserted = await trx
      .insertInto('settings')
      .values({ name: FINGERPRINT_SETTING, value: fingerprint })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    const claimed = await readSetting(trx, FINGERPRINT_SETTING);
    if (claimed !== fingerprint) return { matches: false, report: { resealed: 0, unreadable: 0 } };
    // The fingerprint is new: the first start since vault keys are kept out of the store, the one re-seal.
    const first = Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
    return { matches: true, report: first ? await reseal(trx, box, new SecretBox(options.legacySecret, VAULT_KEY_INFO)) : { resealed: 0, unreadable: 0 } };
  });
  if (!outcome.matches) {
    // A key this node generated a moment ago lost the race to another node's: it sealed nothing, it goes.
    if (source === 'generated') fs.rmSync(file, { force: true });
    return new VaultKey(
      null,
      'none',
      fileOrNull,
      source === 'SANDBOXD_VAULT_KEY'
        ? "SANDBOXD_VAULT_KEY is not this deployment's vault key (its fingerprint differs from the one in the store): set the key the deployment's secrets were sealed under"
        : `${file} is not this deployment's vault key (its fingerprint differs from the one in the store): restore the right file, or set SANDBOXD_VAULT_KEY`,
    );
  }
  return new VaultKey(box, source, fileOrNull, null, outcome.report);
}
