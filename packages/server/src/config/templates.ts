/**
 * Settings of templates built from OCI images and git repositories: registries and git servers they may use,
 * limits of a build.
 */
import { booleanFlag, integer, type Setting, type SettingValues } from './kit.ts';

/** Parses `registry.example.com, 127.0.0.1:5000` into registry host[:port] names as image references write them. */
function registryList(raw: string): string[] {
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((entry) => {
      if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/.test(entry))
        throw new Error(`expected registry host names with an optional port (registry.example.com, 127.0.0.1:5000), got "${entry}"`);
      return entry;
    });
}

/** The settings of the templates block, by name (each name is unique across the blocks). */
export const templatesSettings = {
  templateInsecureRegistries: {
    env: 'SANDBOXD_TEMPLATE_INSECURE_REGISTRIES',
    description:
      "Registries (host[:port], as an image reference names them) that template builds reach over plain HTTP or unverified TLS, comma-separated; they are the operator's choice, so they may also be on private addresses. Default: none",
    parse: registryList,
    fallback: (): string[] => [],
  },
  templateRegistryAllowPrivate: {
    env: 'SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE',
    description:
      'Let template builds pull from registries whose host is or resolves to a loopback, private, link-local or metadata address (default false; the insecure registries are always allowed)',
    parse: booleanFlag,
    fallback: () => false,
  },
  templateGitAllowPrivate: {
    env: 'SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE',
    description:
      'Let template builds clone git_clone_url from hosts that are or resolve to loopback, private, link-local or metadata addresses (default false; set it for git servers on your own network)',
    parse: booleanFlag,
    fallback: () => false,
  },
  templateGitTimeoutSeconds: {
    env: 'SANDBOXD_TEMPLATE_GIT_TIMEOUT_SECONDS',
    description: "Longest the host's clone of a template's git_clone_url may take; the build fails at git_clone beyond it",
    parse: integer(5, 86_400),
    fallback: () => 300,
  },
  templateGitMaxMb: {
    env: 'SANDBOXD_TEMPLATE_GIT_MAX_MB',
    description:
      'Largest repository (its bare clone on the host, MiB) a template build copies into its VM; the clone is stopped and the build fails at git_clone beyond it',
    parse: integer(1, 1024 * 1024),
    fallback: () => 512,
  },
  templateMaxBuildsPerUser: {
    env: 'SANDBOXD_TEMPLATE_MAX_BUILDS_PER_USER',
    description:
      'Template builds a user may have under way or queued at once (default 2); more are refused with 429 QUOTA_EXCEEDED until one ends. Builds run one at a time per node, so this keeps one user from filling the queue',
    parse: integer(1, 1000),
    fallback: () => 2,
  },
  templatePostBuildTimeoutSeconds: {
    env: 'SANDBOXD_TEMPLATE_POST_BUILD_TIMEOUT_SECONDS',
    description: "Longest a template's post_build_cmd may run in its build VM; it is killed and the build fails at post_build_cmd beyond it",
    parse: integer(1, 86_400),
    fallback: () => 1800,
  },
} satisfies Record<string, Setting<unknown>>;

/** The templates block of the configuration. */
export type TemplatesConfig = SettingValues<typeof templatesSettings>;
