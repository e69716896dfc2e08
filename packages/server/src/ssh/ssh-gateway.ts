/**
 * The SSH gateway: `ssh <vm_id>@host` or `ssh <session_id>@host`, authenticated by a public key the VM's owner
 * registered (POST /v1/ssh-keys), gives a shell, a command, scp/sftp and `-L` port forwarding in that VM, all
 * through the guest agent: the guest runs no sshd and holds no keys.
 *
 * Only public key authentication is offered, and a key counts only with a valid signature (ssh2 hands the
 * signature over; it is checked here). One connection is one login; each of its channels resolves the login's
 * VM afresh (a session's VM may have been replaced, or started, in between).
 */
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import ssh2, { type AuthContext, type Connection, type ServerChannel, type Session } from 'ssh2';
import { splitListenAddress, type Config } from '../config.ts';
import type { AuditLog } from '../core/audit.ts';
import type { GuestAgent } from '../core/vm-engine.ts';
import { channelVm, resolveLogin, type Login, type LoginServices, type LoginVm } from './login.ts';
import { loadHostKey } from './host-key.ts';
import { runExecChannel } from './exec-channel.ts';
import { runShellChannel, type ShellHandle, type TerminalRequest } from './shell-channel.ts';
import { SftpSession } from './sftp-server.ts';
import { openTunnelChannel, refusedDestination } from './tcpip-channel.ts';

const { Server, utils } = ssh2;

/** Where the gateway listens and what clients should dial. */
export interface SshGatewayAddress {
  host: string;
  port: number;
  /** The host name clients use: the public URL's. */
  publicHost: string;
  hostKeyFingerprint: string;
}

export interface SshGatewayServices extends LoginServices {
  audit: AuditLog;
}

/** Environment names a client may pass with `SendEnv`/`SetEnv` (LANG, LC_*, and the like; never PATH or LD_*). */
const ACCEPTED_ENV = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|COLORTERM|TERM_PROGRAM)$/;

/** A GuestAgent whose every operation first waits for the real one. */
function deferredAgent(agent: Promise<GuestAgent>): GuestAgent {
  return new Proxy({} as GuestAgent, {
    get: (_target, name: keyof GuestAgent) => async (...args: unknown[]) => {
      const real = await agent;
      return (real[name] as (...args: unknown[]) => unknown).apply(real, args);
    },
  });
}

export class SshGateway {
  private server: InstanceType<typeof Server> | null = null;
  private bound: SshGatewayAddress | null = null;
  private readonly connections = new Set<Connection>();

  constructor(
    private readonly config: Pick<Config, 'sshListen' | 'sshHostKeyFile' | 'dataDir' | 'publicUrl'>,
    private readonly services: SshGatewayServices,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The bound address, null before start or when turned off. */
  address(): SshGatewayAddress | null {
    return this.bound;
  }

  async start(): Promise<SshGatewayAddress | null> {
    if (this.config.sshListen === 'off') return null;
    const hostKey = loadHostKey(this.config);
    const server = new Server({ hostKeys: [hostKey.privateKey], ident: 'sandboxd' }, (client, info) => this.accept(client, info.ip));
    this.server = server;
    const { host, port } = splitListenAddress(this.config.sshListen);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error: Error) => this.log.error({ err: error }, 'SSH gateway error'));
    const address = server.address() as AddressInfo;
    const publicHost = new URL(this.config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    this.bound = { host, port: address.port, publicHost, hostKeyFingerprint: hostKey.fingerprint };
    this.log.info({ ssh: `${host}:${address.port}`, hostKey: hostKey.fingerprint }, 'SSH gateway listening');
    return this.bound;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    this.bound = null;
    for (const client of this.connections) client.end();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Connection, sourceIp: string): void {
    this.connections.add(client);
    let login: Login | null = null;
    client.on('authentication', (context) => {
      void this.authenticate(context).then(
        (accepted) => {
          if (!accepted) return context.reject(['publickey']);
          login = accepted;
          context.accept();
        },
        (error: unknown) => {
          this.log.error({ err: error }, 'SSH authentication failed with an error');
          context.reject(['publickey']);
        },
      );
    });
    client.on('ready', () => {
      const current = login!;
      void this.services.audit
        .record({
          actor: { userId: current.principal.userId, username: current.principal.username, via: 'ssh_key', apiKeyId: null, sourceIp, userAgent: null },
          action: 'ssh.login',
          target: current.scope.kind === 'vm' ? { type: 'vm', id: current.scope.vmId } : { type: 'session', id: current.scope.sessionId },
          outcome: 'success',
          detail: { ssh_key_id: current.key.id, fingerprint: current.key.fingerprint },
        })
        .catch((error: unknown) => this.log.error({ err: error }, 'recording an SSH login in the audit log failed'));
      void this.services.sshKeys.markUsed(current.key).catch(() => undefined);
      client.on('session', (acceptSession) => this.serveSession(current, acceptSession()));
      client.on('tcpip', (acceptChannel, rejectChannel, info) => {
        void this.forward(current, info.destIP, info.destPort, acceptChannel, rejectChannel);
      });
    });
    client.on('error', (error) => this.log.debug({ err: error }, 'SSH connection error'));
    client.on('close', () => this.connections.delete(client));
  }

  /** The login, when the method is publickey, the key is the owner's, and (when present) the signature holds. */
  private async authenticate(context: AuthContext): Promise<Login | null> {
    if (context.method !== 'publickey') return null;
    const login = await resolveLogin(this.services, context.username, context.key.data);
    if (!login) return null;
    // Without a signature the client only asks whether the key would do; it signs next.
    if (!context.signature || !context.blob) return login;
    const key = utils.parseKey(context.key.data);
    if (key instanceof Error || Array.isArray(key)) return null;
    return key.verify(context.blob, context.signature, context.hashAlgo) === true ? login : null;
  }

  private serveSession(login: Login, session: Session): void {
    let terminal: TerminalRequest | null = null;
    let shell: ShellHandle | null = null;
    const env: Record<string, string> = {};
    session.on('pty', (accept, _reject, info) => {
      terminal = { cols: info.cols || 80, rows: info.rows || 24, term: info.term };
      accept?.();
    });
    session.on('window-change', (accept, _reject, info) => {
      if (terminal) terminal = { ...terminal, cols: info.cols, rows: info.rows };
      shell?.resize(info.cols, info.rows);
      accept?.();
    });
    session.on('env', (accept, reject, info) => {
      if (!ACCEPTED_ENV.test(info.key)) return reject?.();
      env[info.key] = info.val;
      accept?.();
    });
    const run = (command: string | null, accept: () => ServerChannel) => {
      void this.withVm(login, accept, async (vm, channel) => {
        if (terminal) shell = await runShellChannel(vm, terminal, command, env, channel);
        else await runExecChannel(vm, command ?? 'exec /bin/bash -l', env, channel);
      });
    };
    session.on('shell', (accept) => run(null, accept));
    session.on('exec', (accept, _reject, info) => run(info.command, accept));
    session.on('subsystem', (accept, reject, info) => {
      if (info.name !== 'sftp') return reject();
    });
    session.on('sftp', (accept) => {
      const sftp = accept();
      if (!sftp) return;
      // Requests are taken from the start; each waits for the VM (a failure answers each with its reason).
      const vm = channelVm(this.services, login);
      vm.catch(() => undefined);
      new SftpSession(sftp, deferredAgent(vm.then((found) => found.agent)));
    });
  }

  /**
   * Resolves the login's VM for a new shell or exec channel, then runs `work`. When the VM cannot be had or the
   * work fails, the channel says why on stderr and exits 255, as ssh does for its own failures.
   */
  private async withVm(login: Login, accept: () => ServerChannel, work: (vm: LoginVm, channel: ServerChannel) => Promise<void>): Promise<void> {
    // Accepted at once: ssh2 refuses a late accept once the client sent EOF (as `ssh host cmd < /dev/null` does
    // right after its request); input that arrives meanwhile waits in the channel.
    const channel = accept();
    if (!channel) return;
    try {
      await work(await channelVm(this.services, login), channel);
    } catch (error) {
      channel.stderr.write(`sandboxd: ${(error as Error).message}\r\n`);
      channel.exit(255);
      channel.end();
    }
  }

  private async forward(login: Login, host: string, port: number, accept: () => ServerChannel, reject: () => void): Promise<void> {
    try {
      const vm = await channelVm(this.services, login);
      const refused = refusedDestination(host, port, vm.vm.id);
      if (refused) {
        this.log.debug({ vm: vm.vm.id, host, port }, `SSH forwarding refused: ${refused}`);
        return reject();
      }
      await openTunnelChannel(vm, port, accept);
    } catch (error) {
      this.log.debug({ err: error, port }, 'SSH forwarding failed');
      reject();
    }
  }
}
