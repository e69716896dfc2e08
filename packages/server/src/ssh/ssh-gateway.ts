/**
 * The SSH gateway: `ssh <vm_id>@host` or `ssh <session_id>@host`, authenticated by a public key the VM's owner
 * registered (POST /v1/ssh-keys), gives a shell, a command, scp/sftp and `-L` port forwarding in that VM, all
 * through the guest agent: the guest runs no sshd and holds no keys.
 *
 * Only public key authentication is offered, and a key counts only with a valid signature (ssh2 hands the
 * signature over; it is checked here, before anything is looked up). A key query (no signature: "would this key
 * do?") is answered yes for any key the gateway can read, without looking at the user name or the key's owner:
 * the answer must not tell someone who holds only a user's public key which VMs or sessions that user has.
 * One connection is one login; each of its channels resolves the login's VM afresh (a session's VM may have
 * been replaced, or started, in between).
 *
 * Limits (`connection-limits.ts`): connections at once overall and per source, a login grace time counted from
 * the TCP accept (a client that never sends its version line is dropped too), failed attempts per connection,
 * and channels open at once per connection.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import ssh2, { type AuthContext, type Connection, type ServerChannel, type Session } from 'ssh2';
import { splitListenAddress } from '../host/listen-address.ts';
import type { AuditLog } from '../core/audit.ts';
import type { GuestAgent } from '../core/vm-engine.ts';
import { AUTH_REQUESTS_PER_TRY, connectionSource, ConnectionCounter, type SshLimits } from './connection-limits.ts';
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
    get:
      (_target, name: keyof GuestAgent) =>
      async (...args: unknown[]) => {
        const real = await agent;
        return (real[name] as (...args: unknown[]) => unknown).apply(real, args);
      },
  });
}

/** What the gateway is built from: the configuration's `ssh` block (config/ssh.ts), the data directory and the public URL. */
export interface SshGatewayConfig {
  /** `HOST:PORT`, or `off`. */
  sshListen: string;
  /** The host key's file; null: the one generated into the data directory. */
  sshHostKeyFile: string | null;
  sshMaxConnections: number;
  sshMaxConnectionsPerSource: number;
  sshLoginGraceSeconds: number;
  sshMaxAuthTries: number;
  sshMaxChannels: number;
  dataDir: string;
  /** The server's public URL: its host is where users are told to `ssh`. */
  publicUrl: string;
}

export class SshGateway {
  private server: InstanceType<typeof Server> | null = null;
  /** The TCP listener: ssh2 gets each socket only after the limits admitted it. */
  private listener: net.Server | null = null;
  private bound: SshGatewayAddress | null = null;
  private readonly connections = new Set<Connection>();
  private readonly sockets = new Set<Socket>();
  /** Login grace timers by `ip|port` of the socket (what ssh2's connection info names it by). */
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();
  private readonly limits: SshLimits;
  private readonly counter: ConnectionCounter;

  constructor(
    private readonly config: SshGatewayConfig,
    private readonly services: SshGatewayServices,
    private readonly log: FastifyBaseLogger,
  ) {
    this.limits = {
      maxConnections: config.sshMaxConnections,
      maxConnectionsPerSource: config.sshMaxConnectionsPerSource,
      loginGraceMs: config.sshLoginGraceSeconds * 1000,
      maxAuthTries: config.sshMaxAuthTries,
      maxChannels: config.sshMaxChannels,
    };
    this.counter = new ConnectionCounter(this.limits);
  }

  /** The bound address, null before start or when turned off. */
  address(): SshGatewayAddress | null {
    return this.bound;
  }

  async start(): Promise<SshGatewayAddress | null> {
    if (this.config.sshListen === 'off') return null;
    const hostKey = loadHostKey(this.config);
    const server = new Server({ hostKeys: [hostKey.privateKey], ident: 'sandboxd' }, (client, info) => this.accept(client, info.ip, info.port));
    this.server = server;
    server.on('error', (error: Error) => this.log.error({ err: error }, 'SSH gateway error'));
    const listener = net.createServer((socket) => this.admit(server, socket));
    this.listener = listener;
    const { host, port } = splitListenAddress(this.config.sshListen);
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, host, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    listener.on('error', (error: Error) => this.log.error({ err: error }, 'SSH gateway error'));
    const address = listener.address() as AddressInfo;
    const publicHost = new URL(this.config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    this.bound = { host, port: address.port, publicHost, hostKeyFingerprint: hostKey.fingerprint };
    this.log.info({ ssh: `${host}:${address.port}`, hostKey: hostKey.fingerprint }, 'SSH gateway listening');
    return this.bound;
  }

  async close(): Promise<void> {
    const listener = this.listener;
    if (!listener) return;
    this.server = null;
    this.listener = null;
    this.bound = null;
    for (const client of this.connections) client.end();
    // Connections still in their version exchange or key exchange have no client to end.
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  /**
   * A new TCP connection: counted against the connection limits (refused connections are closed at once, before
   * ssh2 spends a key exchange on them), given the login grace timer, then handed to ssh2.
   */
  private admit(server: InstanceType<typeof Server>, socket: Socket): void {
    const source = connectionSource(socket.remoteAddress);
    const refused = this.counter.admit(source);
    if (refused) {
      this.log.debug({ source }, `SSH connection refused: ${refused}`);
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    const key = `${socket.remoteAddress}|${socket.remotePort}`;
    const grace = setTimeout(() => {
      this.log.debug({ source }, `SSH connection dropped: not authenticated within ${this.limits.loginGraceMs / 1000} s (SANDBOXD_SSH_LOGIN_GRACE_SECONDS)`);
      socket.destroy();
    }, this.limits.loginGraceMs);
    grace.unref();
    this.graceTimers.set(key, grace);
    socket.once('close', () => {
      clearTimeout(grace);
      if (this.graceTimers.get(key) === grace) this.graceTimers.delete(key);
      this.sockets.delete(socket);
      this.counter.release(source);
    });
    server.injectSocket(socket);
  }

  private accept(client: Connection, sourceIp: string, sourcePort: number): void {
    this.connections.add(client);
    let login: Login | null = null;
    let requests = 0;
    let failures = 0;
    const refuse = (context: AuthContext): void => {
      context.reject(['publickey']);
      if (context.method === 'none') return;
      failures += 1;
      // The last allowed failure ends the connection (as OpenSSH's MaxAuthTries): one connection cannot be used
      // to try keys, or user names, without end.
      if (failures >= this.limits.maxAuthTries) this.endAfterTooManyTries(client, sourceIp, failures);
    };
    client.on('authentication', (context) => {
      requests += 1;
      if (requests > this.limits.maxAuthTries * AUTH_REQUESTS_PER_TRY) {
        context.reject(['publickey']);
        this.endAfterTooManyTries(client, sourceIp, requests);
        return;
      }
      void this.authenticate(context).then(
        (outcome) => {
          if (outcome === null) return refuse(context);
          if (outcome !== 'query') login = outcome;
          context.accept();
        },
        (error: unknown) => {
          this.log.error({ err: error }, 'SSH authentication failed with an error');
          refuse(context);
        },
      );
    });
    client.on('ready', () => {
      const graceKey = `${sourceIp}|${sourcePort}`;
      clearTimeout(this.graceTimers.get(graceKey));
      this.graceTimers.delete(graceKey);
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
      // Channels open at once on this connection: each one costs agent streams (and a session's may start a VM).
      let channels = 0;
      const openChannel = (): (() => void) | null => {
        if (channels >= this.limits.maxChannels) return null;
        channels += 1;
        let released = false;
        return () => {
          if (!released) channels -= 1;
          released = true;
        };
      };
      client.on('session', (acceptSession, rejectSession) => {
        const release = openChannel();
        if (!release) return rejectSession();
        const session = acceptSession();
        session.once('close', release);
        this.serveSession(current, session);
      });
      client.on('tcpip', (acceptChannel, rejectChannel, info) => {
        const release = openChannel();
        if (!release) return rejectChannel();
        const accept = (): ServerChannel => {
          const channel = acceptChannel();
          if (channel) channel.once('close', release);
          else release();
          return channel;
        };
        const reject = (): void => {
          release();
          rejectChannel();
        };
        void this.forward(current, info.destIP, info.destPort, accept, reject);
      });
    });
    client.on('error', (error) => this.log.debug({ err: error }, 'SSH connection error'));
    client.on('close', () => this.connections.delete(client));
  }

  private endAfterTooManyTries(client: Connection, sourceIp: string, attempts: number): void {
    this.log.debug(
      { source: sourceIp, attempts },
      `SSH connection closed: too many authentication attempts (SANDBOXD_SSH_MAX_AUTH_TRIES=${this.limits.maxAuthTries})`,
    );
    client.end();
  }

  /**
   * `'query'` for a key query (publickey without a signature) of any key the gateway can read; the login for a
   * publickey request whose signature holds and whose key is the named VM's or session's owner's; else null.
   */
  private async authenticate(context: AuthContext): Promise<Login | 'query' | null> {
    if (context.method !== 'publickey') return null;
    const key = utils.parseKey(context.key.data);
    if (key instanceof Error || Array.isArray(key)) return null;
    // Without a signature the client only asks whether the key would do; it signs next. The answer is the same
    // whoever the user name and the key belong to: nothing is looked up until the client proves it holds the key.
    if (!context.signature || !context.blob) return 'query';
    if (key.verify(context.blob, context.signature, context.hashAlgo) !== true) return null;
    return resolveLogin(this.services, context.username, context.key.data);
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
