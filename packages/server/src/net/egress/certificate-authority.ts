/**
 * The certificates the vault needs to terminate a guest's TLS: one certificate authority per deployment (the
 * guest is handed its certificate and trusts it) and, per host name a secret is bound to, a leaf certificate
 * that this CA signs on demand.
 *
 * Keys come from node:crypto (native, asynchronous, off the event loop); node-forge only builds the X.509
 * structures, since Node cannot issue certificates. Forge's own RSA signing is pure JavaScript and takes about
 * 40 ms of blocking time per certificate, so signatures are made by node:crypto too (see `nativeSigner`).
 */
import crypto from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { promisify } from 'node:util';
import forge from 'node-forge';
import type { CaMaterial } from '../../core/vault/vault-ports.ts';

export interface LeafCertificatesOptions {
  /** How many host names keep a ready context (least recently used ones are dropped first). */
  maxEntries?: number;
}

const generateKeyPair = promisify(crypto.generateKeyPair);

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** Certificates start an hour in the past so that a guest whose clock is a little behind still accepts them. */
const BACKDATE_MS = HOUR_MS;
const CA_VALIDITY_MS = 10 * 365 * DAY_MS;
const LEAF_VALIDITY_MS = 7 * DAY_MS;
/** A leaf this close to its end is replaced, so that no connection is ever served with one about to expire. */
const LEAF_RENEW_BEFORE_MS = DAY_MS;

/** DER prefix of a PKCS#1 v1.5 DigestInfo for SHA-256 (RFC 8017 §9.2, note 1); the 32-byte hash follows. */
const SHA256_DIGEST_INFO_PREFIX = Buffer.from('3031300d060960864801650304020105000420', 'hex');

async function generateRsaKey(): Promise<{ publicKeyPem: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey };
}

/**
 * A stand-in for a forge private key whose `sign` forge's `certificate.sign` calls with the SHA-256 of the
 * TBSCertificate: the signature is made natively (RSASSA-PKCS1-v1_5: a type-1 padded DigestInfo, which is what
 * `privateEncrypt` with PKCS#1 padding produces).
 */
function nativeSigner(privateKeyPem: string): forge.pki.rsa.PrivateKey {
  const key = crypto.createPrivateKey(privateKeyPem);
  const sign = (md: forge.md.MessageDigest) => {
    const digest = Buffer.from(md.digest().getBytes(), 'binary');
    const digestInfo = Buffer.concat([SHA256_DIGEST_INFO_PREFIX, digest]);
    return crypto.privateEncrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, digestInfo).toString('binary');
  };
  return { sign } as unknown as forge.pki.rsa.PrivateKey;
}

/** A random positive serial of 16 bytes as hex; the top byte is 0x40-0x7f, so DER needs no sign byte and no byte is dropped. */
function randomSerialHex(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}

/** Makes a self-signed CA (RSA 2048, SHA-256, valid ten years) for the guest to trust. */
export async function createCertificateAuthority(commonName: string): Promise<CaMaterial> {
  const { publicKeyPem, privateKeyPem } = await generateRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  cert.serialNumber = randomSerialHex();
  const now = Date.now();
  cert.validity.notBefore = new Date(now - BACKDATE_MS);
  cert.validity.notAfter = new Date(now + CA_VALIDITY_MS);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(nativeSigner(privateKeyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKeyPem };
}

/**
 * Whether `hostname` is a name a leaf may be made for: a lower-case DNS name (labels of a-z, 0-9, '-' and '_',
 * at most 63 characters each, 253 in all) or an IPv4 literal. Anything else (upper case, a trailing dot,
 * wildcards, IPv6) is refused, so that a cache key is always the name as written in the certificate.
 */
export function isValidLeafName(hostname: string): boolean {
  if (net.isIPv4(hostname)) return true;
  if (hostname.length === 0 || hostname.length > 253) return false;
  return hostname.split('.').every((label) => /^[a-z0-9_-]{1,63}$/.test(label));
}

interface CachedContext {
  context: Promise<tls.SecureContext>;
  /** When the leaf should be replaced (a day before it expires). */
  renewAt: number;
}

/**
 * Leaf certificates signed by one CA, made on first use per host name and kept as ready `tls.SecureContext`s.
 *
 * All leafs of an instance share one RSA key, made once when the first leaf is needed: this is what MITM proxies
 * commonly do (mitmproxy, Burp), since the key protects nothing the CA key does not and generating an RSA key
 * costs far more than signing a certificate.
 */
export class LeafCertificates {
  private readonly maxEntries: number;
  /** By host name; a Map iterates in insertion order, and a hit is moved to the end, so the first key is the least recently used. */
  private readonly contexts = new Map<string, CachedContext>();
  private leafKey: Promise<{ publicKey: forge.pki.rsa.PublicKey; privateKeyPem: string }> | null = null;
  private readonly caCert: forge.pki.Certificate;
  private readonly caSigner: forge.pki.rsa.PrivateKey;
  private readonly caKeyIdentifier: string;

  constructor(
    private readonly ca: CaMaterial,
    options: LeafCertificatesOptions = {},
  ) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 500);
    this.caCert = forge.pki.certificateFromPem(ca.certPem);
    this.caSigner = nativeSigner(ca.keyPem);
    this.caKeyIdentifier = this.caCert.generateSubjectKeyIdentifier().getBytes();
  }

  /** A context serving a leaf for `hostname` (chain: leaf, then CA); throws when the name is not valid. */
  async secureContextFor(hostname: string): Promise<tls.SecureContext> {
    if (!isValidLeafName(hostname)) throw new Error(`not a host name a certificate can be made for: ${JSON.stringify(hostname)}`);
    const cached = this.contexts.get(hostname);
    if (cached && cached.renewAt > Date.now()) {
      this.contexts.delete(hostname);
      this.contexts.set(hostname, cached);
      return cached.context;
    }
    this.contexts.delete(hostname);
    const now = Date.now();
    // The promise is cached before it settles, so concurrent first calls for a name share one certificate.
    const entry: CachedContext = { context: this.makeContext(hostname, now), renewAt: now + LEAF_VALIDITY_MS - LEAF_RENEW_BEFORE_MS };
    this.contexts.set(hostname, entry);
    for (const name of this.contexts.keys()) {
      if (this.contexts.size <= this.maxEntries) break;
      this.contexts.delete(name);
    }
    entry.context.catch(() => {
      if (this.contexts.get(hostname) === entry) this.contexts.delete(hostname);
    });
    return entry.context;
  }

  private key(): Promise<{ publicKey: forge.pki.rsa.PublicKey; privateKeyPem: string }> {
    if (this.leafKey) return this.leafKey;
    const key = generateRsaKey().then(({ publicKeyPem, privateKeyPem }) => ({ publicKey: forge.pki.publicKeyFromPem(publicKeyPem), privateKeyPem }));
    // A failed generation is not remembered: the next call tries again.
    key.catch(() => {
      if (this.leafKey === key) this.leafKey = null;
    });
    this.leafKey = key;
    return key;
  }

  private async makeContext(hostname: string, now: number): Promise<tls.SecureContext> {
    const { publicKey, privateKeyPem } = await this.key();
    const cert = forge.pki.createCertificate();
    cert.publicKey = publicKey;
    cert.serialNumber = randomSerialHex();
    cert.validity.notBefore = new Date(now - BACKDATE_MS);
    cert.validity.notAfter = new Date(now + LEAF_VALIDITY_MS);
    cert.setSubject([{ name: 'commonName', value: hostname }]);
    cert.setIssuer(this.caCert.subject.attributes);
    const altName = net.isIPv4(hostname) ? { type: 7, ip: hostname } : { type: 2, value: hostname };
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [altName] },
      { name: 'authorityKeyIdentifier', keyIdentifier: this.caKeyIdentifier },
    ]);
    cert.sign(this.caSigner, forge.md.sha256.create());
    return tls.createSecureContext({ key: privateKeyPem, cert: forge.pki.certificateToPem(cert) + this.ca.certPem });
  }
}
