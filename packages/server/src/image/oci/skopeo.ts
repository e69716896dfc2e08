/**
 * How skopeo runs for a template pull (issue 31, M-6): in a private mount namespace whose `/etc/hosts` names the
 * registry's host at the addresses that were checked (so a second DNS answer cannot send it elsewhere), as the
 * pull user whose connections the pull guard filters (`pull-guard.ts`: no loopback, private or metadata address,
 * whatever a redirect says). The output directory of a copy is bind-mounted into the pull user's own scratch
 * directory, so the cache's directories need not be reachable by that user.
 */
import { ImageBuildError } from '../errors.ts';
import { runCommand, type RunCommandOptions } from '../run-command.ts';

/** Where and as whom skopeo runs for one pull. */
export interface PullSandbox {
  uid: number;
  gid: number;
  /** The `/etc/hosts` skopeo sees: the registry's name at its checked addresses, nothing else. */
  hostsFile: string;
  /** The pull user's scratch directory (0700): skopeo's HOME and TMPDIR, the auth file, mount points. */
  homeDir: string;
}

/**
 * Run by `unshare --mount` (root, in the new namespace): the bind mounts, then skopeo as the pull user. Every
 * value comes as an argument, never inside the script, so nothing a user wrote is read by the shell.
 */
const SANDBOX_SCRIPT = [
  'set -e',
  'hosts=$1 uid=$2 gid=$3 from=$4 to=$5',
  'shift 5',
  'mount --bind "$hosts" /etc/hosts',
  'if [ -n "$from" ]; then mount --bind "$from" "$to"; fi',
  'exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs -- "$@"',
].join('\n');

/**
 * Runs `skopeo args` in `sandbox`; `bind` mounts a directory at a path of the scratch directory for it. Resolves
 * with its stdout, like `runCommand`, and fails like it (the tail of skopeo's output included).
 */
export async function runSkopeo(
  sandbox: PullSandbox,
  args: readonly string[],
  options: RunCommandOptions & { bind?: { source: string; target: string } } = {},
): Promise<string> {
  const { bind, ...rest } = options;
  const argv = [
    '--mount',
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    SANDBOX_SCRIPT,
    'sandboxd-pull',
    sandbox.hostsFile,
    String(sandbox.uid),
    String(sandbox.gid),
    bind?.source ?? '',
    bind?.target ?? '',
    'skopeo',
    ...args,
  ];
  try {
    return await runCommand('unshare', argv, {
      ...rest,
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: sandbox.homeDir, TMPDIR: sandbox.homeDir, LC_ALL: 'C' },
    });
  } catch (error) {
    if (error instanceof ImageBuildError && error.outputTail.some((line) => /setpriv: failed to execute skopeo/.test(line))) {
      throw new ImageBuildError('IMAGE_TOOL_MISSING', 'skopeo is not installed (apt-get install skopeo)', { cause: error });
    }
    throw error;
  }
}
