/**
 * Builds the agent: its services (the user's cgroups, Python kernels, privileged helper, identity), the route
 * table and the HTTP/2 server that every link's sessions run on. `main.ts` picks the transport and runs it;
 * tests build an agent in-process and serve links of their own.
 */
import { createServer, type Http2Server, type Http2Session } from 'node:http2';
import { UserCgroups } from './exec/user-cgroups.ts';
import { createExecRoute } from './exec/exec-route.ts';
import { createKeptExecRoutes } from './exec/exec-attach-route.ts';
import { KeptExecs } from './exec/kept-execs.ts';
import { SpareShellSet } from './exec/spare-shells.ts';
import { extractRoute } from './files/extract-route.ts';
import { listRoute } from './files/list-route.ts';
import { mkdirRoute } from './files/mkdir-route.ts';
import { createReadRoute } from './files/read-route.ts';
import { removeRoute } from './files/remove-route.ts';
import { statRoute } from './files/stat-route.ts';
import { createTransferRoutes, TRANSFER_MOUNT_POINT, TransferShare } from './files/transfer.ts';
import { createQuiesceRoutes } from './system/quiesce-route.ts';
import { writeRoute } from './files/write-route.ts';
import { Router } from './http/router.ts';
import type { ByteLink } from './link/byte-link.ts';
import { LinkServer, type LinkEvent } from './link/link-server.ts';
import { ANSWER_WITHIN_MS, ROUTES, TRANSFER_MOUNT_TAG } from './protocol/routes.ts';
import { createPtyRoutes } from './pty/pty-routes.ts';
import { TerminalRegistry } from './pty/terminal-registry.ts';
import { KernelPool } from './python/kernel-pool.ts';
import { createPythonResetRoute, createPythonRunRoute } from './python/python-routes.ts';
import { createHelloRoute, pingRoute } from './system/hello-route.ts';
import { AgentIdentity } from './system/identity.ts';
import { PrivilegedHelper } from './system/privileged-helper.ts';
import { createRestoreRoute } from './system/restore-route.ts';
import { createSnapshotPrepareRoute } from './system/snapshot-prepare-route.ts';
import { usageRoute } from './system/usage-route.ts';
import { tunnelRoute } from './tunnel/tunnel-route.ts';

/** Everything the agent needs to know at start. */
export interface AgentConfig {
  /** The VM id known at boot, or null. */
  vmId: string | null;
  /** False: the privileged helper changes nothing (tests on a host). */
  systemChanges: boolean;
  /** The Python interpreter of the user's kernels. */
  pythonCommand: string;
  /** The interpreter of the agent's own Python (privileged helper, terminal relay); default `pythonCommand`. */
  helperPythonCommand?: string;
  /**
   * Parent of the cgroups of user programs (execs, interpreters, terminals); undefined = `<cgroup2 mount>/sandboxd-exec`;
   * null = none (no CPU time, no limits).
   */
  cgroupRoot: string | null | undefined;
  /** Start a spare Python interpreter at boot. */
  prestartPython: boolean;
  /** Keep a login shell ready for the next command (spare-shells.ts); default true. */
  spareShells?: boolean;
  /** Shell for exec `command` requests. */
  defaultShell: string[];
  /** Working directory of execs and kernels (the agent runs as root with HOME=/root). */
  home: string;
  /** A directory standing in for the transfer share (tests on a host); default: mount the VM's 9p share. */
  transferDir?: string;
  /** Diagnostics of links and sessions. */
  onLinkEvent?: (event: LinkEvent) => void;
}

// HTTP/2 tuning for a local, reliable, low-latency link carrying bulk file transfers and many streams: large
// windows so a single transfer is not throttled by round trips; generous session memory for many streams.
// The host's connection window also bounds what the agent may queue for the link (see session-stream.ts).
const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;

/** Terminals (running or ended) one VM keeps at once. */
const MAX_TERMINALS = 32;

/** A built agent. */
export class Agent {
  readonly http2: Http2Server;
  private readonly links = new Set<LinkServer>();
  readonly terminals: TerminalRegistry;
  /** Execs that outlive their stream (`keep`), for re-attaching after a pause or a host restart. */
  private readonly keptExecs = new KeptExecs();
  /** Shells started ahead of the next command (when the default shell is `bash -lc`). */
  private readonly spares: SpareShellSet | undefined;

  private constructor(
    private readonly config: AgentConfig,
    readonly identity: AgentIdentity,
    readonly kernels: KernelPool,
    readonly helper: PrivilegedHelper,
    readonly cgroups: UserCgroups | null,
  ) {
    this.terminals = new TerminalRegistry({
      pythonCommand: config.helperPythonCommand ?? config.pythonCommand,
      defaultCwd: config.home,
      maxTerminals: MAX_TERMINALS,
      killGraceMs: 2000,
      newCgroup: () => cgroups?.group('pty') ?? null,
    });
    const [shell, flag] = config.defaultShell;
    if (config.spareShells !== false && shell && flag === '-lc' && config.defaultShell.length === 2) {
      this.spares = new SpareShellSet({ shell, cgroups, env: process.env, cwd: config.home });
    }
    this.http2 = createServer({
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, maxConcurrentStreams: 1000 },
      maxSessionMemory: 64,
    });
    this.http2.on('session', (session) => {
      // The connection-level window is not a setting; raise it per session.
      try {
        session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
      } catch {
        // Only a throughput optimisation.
      }
    });
    const router = this.buildRouter();
    this.http2.on('stream', (stream, headers) => void router.dispatch(stream, headers));
  }

  /** Prepares the services and starts the helper and the spare interpreter in the background. */
  static async create(config: AgentConfig): Promise<Agent> {
    const cgroups = config.cgroupRoot === null ? null : await UserCgroups.create(config.cgroupRoot);
    const kernels = new KernelPool({
      pythonCommand: config.pythonCommand,
      cwd: config.home,
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      interruptGraceMs: 2000,
      markerWaitMs: 1000,
      prestart: config.prestartPython,
      maxContexts: 64,
      newCgroup: () => cgroups?.group('python') ?? null,
    });
    const helper = new PrivilegedHelper({ pythonCommand: config.helperPythonCommand ?? config.pythonCommand, dryRun: !config.systemChanges });
    const agent = new Agent(config, new AgentIdentity(config.vmId), kernels, helper, cgroups);
    kernels.start();
    agent.spares?.start();
    void helper.start().catch(() => undefined);
    return agent;
  }

  /** Serves a link: link sync and HTTP/2 sessions until the link closes. */
  serve(link: ByteLink): LinkServer {
    const server = new LinkServer(link, this.http2, this.config.onLinkEvent ? { onEvent: this.config.onLinkEvent } : {});
    this.links.add(server);
    void server.closed.then(() => this.links.delete(server));
    server.start();
    return server;
  }

  /** Stops everything the agent started. */
  async close(): Promise<void> {
    for (const link of this.links) link.close();
    this.terminals.close();
    this.keptExecs.close();
    this.spares?.close();
    this.kernels.close();
    this.helper.stop();
    await this.cgroups?.dispose();
  }

  private handover(session: Http2Session): void {
    for (const link of this.links) if (link.owns(session)) link.handover();
  }

  private buildRouter(): Router {
    const { identity, kernels, helper, cgroups, config } = this;
    const pty = createPtyRoutes(this.terminals);
    const keptExecs = createKeptExecRoutes(this.keptExecs);
    const transferDir = config.transferDir;
    const transferShare = transferDir
      ? new TransferShare(async () => transferDir)
      : new TransferShare(
          async () => {
            await helper.mount9p(TRANSFER_MOUNT_TAG, TRANSFER_MOUNT_POINT);
            return TRANSFER_MOUNT_POINT;
          },
          () => helper.umount(TRANSFER_MOUNT_POINT),
        );
    const transfer = createTransferRoutes(transferShare);
    const quiesce = createQuiesceRoutes(transferShare);
    const { control, fileRead, transferChunk } = ANSWER_WITHIN_MS;
    return new Router()
      .add('GET', ROUTES.hello, createHelloRoute(identity), control)
      .add('GET', ROUTES.ping, pingRoute, control)
      .add(
        'POST',
        ROUTES.exec,
        createExecRoute({
          cgroups,
          defaultShell: config.defaultShell,
          defaultCwd: config.home,
          kept: this.keptExecs,
          ...(this.spares ? { spares: this.spares } : {}),
        }),
        control,
      )
      .add('POST', ROUTES.execAttach, keptExecs.attach, control)
      .add('GET', ROUTES.execKept, keptExecs.list, control)
      .add('POST', ROUTES.pythonRun, createPythonRunRoute(kernels), null)
      .add('POST', ROUTES.pythonReset, createPythonResetRoute(kernels), control)
      .add('PUT', ROUTES.fileContent, writeRoute, null)
      .add('GET', ROUTES.fileContent, createReadRoute(transferShare), fileRead)
      .add('POST', ROUTES.fileTransferIn, transfer.transferIn, transferChunk)
      .add('POST', ROUTES.fileTransferAbort, transfer.transferAbort, control)
      .add('POST', ROUTES.fileTransferOut, transfer.transferOut, transferChunk)
      .add('GET', ROUTES.fileList, listRoute, control)
      .add('GET', ROUTES.fileStat, statRoute, control)
      .add('POST', ROUTES.fileMkdir, mkdirRoute, control)
      .add('POST', ROUTES.fileRemove, removeRoute, control)
      .add('POST', ROUTES.fileExtract, extractRoute, null)
      .add('POST', ROUTES.pty, pty.create, control)
      .add('GET', ROUTES.pty, pty.list, control)
      .add('GET', ROUTES.ptyInfo, pty.info, control)
      .add('POST', ROUTES.ptyResize, pty.resize, control)
      .add('POST', ROUTES.ptyKill, pty.kill, control)
      .add('POST', ROUTES.ptyAttach, pty.attach, control)
      .add('GET', ROUTES.usage, usageRoute, control)
      .add('POST', ROUTES.restore, createRestoreRoute({ helper, kernels, identity, endCapture: () => transferShare.thaw() }), control)
      .add('POST', ROUTES.snapshotQuiesce, quiesce.quiesce, null)
      .add('POST', ROUTES.snapshotThaw, quiesce.thaw, control)
      .add('POST', ROUTES.snapshotPrepare, createSnapshotPrepareRoute({ helper, kernels, handover: (session) => this.handover(session) }), null)
      .connect(tunnelRoute, control);
  }
}
