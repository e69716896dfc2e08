/** Settings of the SSH gateway: where it listens, its host key, and the limits on connections, logins and channels. */
import { integer, listenAddress, type Setting, type SettingValues } from './kit.ts';

/** The settings of the ssh block, by name (each name is unique across the blocks). */
export const sshSettings = {
  sshListen: {
    env: 'SANDBOXD_SSH_LISTEN',
    description:
      'HOST:PORT of the SSH gateway (`ssh <vm_id or session_id>@host` with a key registered at /v1/ssh-keys: shell, commands, scp/sftp, -L forwarding into the VM), or `off`; default the API host on port 2222',
    parse: listenAddress,
    fallback: () => '',
  },
  sshHostKeyFile: {
    env: 'SANDBOXD_SSH_HOST_KEY_FILE',
    description:
      "The SSH gateway's host key (an OpenSSH private key file); unset = an ed25519 key generated at the first start and kept in DATA_DIR/ssh-host-key (mode 0600)",
    parse: (raw: string) => raw,
    fallback: () => null as string | null,
  },
  sshMaxConnections: {
    env: 'SANDBOXD_SSH_MAX_CONNECTIONS',
    description: 'Connections the SSH gateway holds at once, logged in or not; more are closed at once',
    parse: integer(1, 1_000_000),
    fallback: () => 1000,
  },
  sshMaxConnectionsPerSource: {
    env: 'SANDBOXD_SSH_MAX_CONNECTIONS_PER_SOURCE',
    description: 'Connections the SSH gateway holds at once from one source (an IPv4 address, or an IPv6 /64); more are closed at once',
    parse: integer(1, 1_000_000),
    fallback: () => 50,
  },
  sshLoginGraceSeconds: {
    env: 'SANDBOXD_SSH_LOGIN_GRACE_SECONDS',
    description: "Seconds an SSH connection has from its TCP connect to be authenticated; it is dropped then (as OpenSSH's LoginGraceTime)",
    parse: integer(1, 3600),
    fallback: () => 30,
  },
  sshMaxAuthTries: {
    env: 'SANDBOXD_SSH_MAX_AUTH_TRIES',
    description: "Failed authentication attempts an SSH connection may make; the last one closes it (as OpenSSH's MaxAuthTries)",
    parse: integer(1, 100),
    fallback: () => 6,
  },
  sshMaxChannels: {
    env: 'SANDBOXD_SSH_MAX_CHANNELS',
    description: "Channels (shells, commands, sftp, -L forwardings) one SSH connection may have open at once; more are refused (as OpenSSH's MaxSessions)",
    parse: integer(1, 10_000),
    fallback: () => 10,
  },
} satisfies Record<string, Setting<unknown>>;

/** The ssh block of the configuration. */
export type SshConfig = SettingValues<typeof sshSettings>;
