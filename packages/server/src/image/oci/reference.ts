import { OciImageError } from './errors.ts';

/** An image reference, checked and normalised the way Docker and containers/image read one. */
export interface ImageReference {
  /** `host[:port]`, e.g. `docker.io`, `127.0.0.1:5000`, `registry.example.com`. */
  registry: string;
  /** Repository path inside the registry, e.g. `library/alpine`. */
  repository: string;
  /** The tag; `latest` when the reference had neither tag nor digest. Undefined with a digest and no tag. */
  tag?: string;
  /** `sha256:<64 hex>` (or `sha512:<128 hex>`) when the reference pins one. */
  digest?: string;
  /** `registry/repository[:tag][@digest]`: what the tools are given, after `docker://`. */
  canonical: string;
}

const DEFAULT_REGISTRY = 'docker.io';
/** The distribution spec's grammar (github.com/distribution/reference, `regexp.go`). */
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const REGISTRY = new RegExp(`^${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]{1,5})?$`);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;
const MAX_NAME_LENGTH = 255;

/**
 * Parses `[registry/]repository[:tag][@digest]`. A first component without a dot or a colon that is not
 * `localhost` is a Docker Hub path (`alpine` → `docker.io/library/alpine`). Throws `OCI_REFERENCE_INVALID`
 * (step `resolve`) with what is wrong; nothing that passes can be taken for an option or a transport by a tool.
 */
export function parseImageReference(input: string): ImageReference {
  const fail = (why: string): never => {
    throw new OciImageError('OCI_REFERENCE_INVALID', `invalid image reference ${JSON.stringify(input)}: ${why}`, { step: 'resolve' });
  };
  if (typeof input !== 'string' || input.length === 0) fail('it is empty');
  if (input.length > 512) fail('it is longer than 512 characters');
  if (/\s/.test(input)) fail('it contains white space');
  if (input.includes('://')) fail('give the reference without a scheme or transport (no "docker://")');

  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) fail('the digest must be sha256:<64 lowercase hex digits> (or sha512:<128>)');
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) fail('a tag is 1 to 128 letters, digits, "_", "." or "-", not starting with "." or "-"');
  }

  const components = rest.split('/');
  let registry = DEFAULT_REGISTRY;
  const first = components[0] ?? '';
  if (components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())) {
    registry = first;
    components.shift();
    if (!REGISTRY.test(registry)) fail(`"${registry}" is not a registry host[:port]`);
  }
  if (registry === DEFAULT_REGISTRY && components.length === 1) components.unshift('library');
  for (const component of components) {
    if (!PATH_COMPONENT.test(component)) {
      fail(
        component === ''
          ? 'the repository name is empty or has an empty path component'
          : `"${component}" is not a repository path component (lowercase letters, digits and single separators . _ __ -)`,
      );
    }
  }
  const repository = components.join('/');
  if (registry.length + 1 + repository.length > MAX_NAME_LENGTH) fail(`the name is longer than ${MAX_NAME_LENGTH} characters`);
  if (tag === undefined && digest === undefined) tag = 'latest';
  const canonical = `${registry}/${repository}${tag === undefined ? '' : `:${tag}`}${digest === undefined ? '' : `@${digest}`}`;
  return { registry, repository, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }), canonical };
}

/** `registry/repository@digest`: the reference of one manifest, as pulled. */
export function pinnedReference(reference: ImageReference, digest: string): string {
  return `${reference.registry}/${reference.repository}@${digest}`;
}
