import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '../hashing.ts';
import { OciImageError } from './errors.ts';
import type { OciImageConfig } from './types.ts';

/** The OCI layout's directory inside a pulled layer, and the tag its one image has there. */
export const LAYOUT_DIR = 'layout';
export const LAYOUT_TAG = 'image';

const DIGEST = /^sha256:([a-f0-9]{64})$/;

/** The image config of the pulled image, as the OCI image spec has it (the parts sandboxd reads). */
interface ImageConfigBlob {
  architecture?: unknown;
  os?: unknown;
  config?: { Env?: unknown; WorkingDir?: unknown; User?: unknown; Entrypoint?: unknown; Cmd?: unknown } | null;
}

/**
 * Reads the image config of the layout's tagged image (index → manifest → config), checking each blob against
 * its digest, and refuses images that are not linux/amd64. Returns the config normalised.
 */
export async function readImageConfig(layoutDir: string): Promise<OciImageConfig> {
  const index = JSON.parse(await readFile(join(layoutDir, 'index.json'), 'utf8')) as {
    manifests?: { digest?: string; annotations?: Record<string, string> }[];
  };
  const entry = index.manifests?.find((candidate) => candidate.annotations?.['org.opencontainers.image.ref.name'] === LAYOUT_TAG);
  if (!entry?.digest) throw new OciImageError('OCI_COMMAND_FAILED', `the pulled layout ${layoutDir} has no image tagged ${LAYOUT_TAG}`, { step: 'unpack' });
  const manifest = JSON.parse(await readBlob(layoutDir, entry.digest)) as { config?: { digest?: string } };
  if (!manifest.config?.digest) throw new OciImageError('OCI_UNSUPPORTED', 'the image manifest names no config', { step: 'unpack' });
  const blob = JSON.parse(await readBlob(layoutDir, manifest.config.digest)) as ImageConfigBlob;
  if (blob.os !== 'linux' || blob.architecture !== 'amd64') {
    throw new OciImageError('OCI_UNSUPPORTED', `the image is for ${String(blob.os)}/${String(blob.architecture)}; sandboxd boots linux/amd64 images`, {
      step: 'unpack',
    });
  }
  return normaliseConfig(blob.config ?? {});
}

/** Env as a map (a later duplicate wins; an entry without `=` is a name with an empty value, as Docker reads it). */
export function normaliseConfig(config: NonNullable<ImageConfigBlob['config']>): OciImageConfig {
  const env: Record<string, string> = {};
  for (const entry of stringList(config.Env)) {
    const equals = entry.indexOf('=');
    const name = equals < 0 ? entry : entry.slice(0, equals);
    if (name === '' || name.includes('\0')) continue;
    env[name] = equals < 0 ? '' : entry.slice(equals + 1).replaceAll('\0', '');
  }
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  return { env, workingDir: text(config.WorkingDir), user: text(config.User), entrypoint: stringList(config.Entrypoint), cmd: stringList(config.Cmd) };
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

async function readBlob(layoutDir: string, digest: string): Promise<string> {
  const hex = DIGEST.exec(digest)?.[1];
  if (!hex) throw new OciImageError('OCI_UNSUPPORTED', `unsupported digest ${digest} in the pulled layout`, { step: 'unpack' });
  const bytes = await readFile(join(layoutDir, 'blobs', 'sha256', hex));
  if (sha256(bytes) !== hex) throw new OciImageError('OCI_COMMAND_FAILED', `blob ${digest} in ${layoutDir} does not match its digest`, { step: 'unpack' });
  return bytes.toString('utf8');
}
