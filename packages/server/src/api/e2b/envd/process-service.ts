/**
 * The in-sandbox daemon's `process.Process` service: E2B's commands over sandboxd's background processes
 * (core/processes.ts) and its PTYs over sandboxd's terminals (core/terminals.ts, through pty-terminals.ts). Both are
 * named to the SDK by their pid in the VM. Start and Connect stream a command's output from its kept output (so
 * nothing printed before the stream opened is lost), or a terminal's scrollback and live output, then the end.
 * Closing a stream leaves the process running, as E2B's `disconnect()` expects; a stream's deadline (the SDK's
 * `timeoutMs`) ends the stream, not the process, as in envd.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { ProcessView } from '../../../core/processes.ts';
import type { TerminalView } from '../../../core/terminals.ts';
import type { Services } from '../../../services.ts';
import { toConnectError } from '../errors.ts';
import { KERNEL_TAG } from '../code-interpreter/js-contexts.ts';
import { callerOf, keepaliveMsOf, streamSignal, userOf } from './caller.ts';
import type { Process, ProcessInfo } from './gen/process/process_pb.ts';
import { ProcessConfigSchema, ProcessEventSchema, Signal, type ProcessEvent, type ProcessSelector, type StartRequest } from './gen/process/process_pb.ts';
import { withKeepalive } from './keepalive.ts';
import { endEventOf } from './process-end.ts';
import { ProcessRecords } from './process-records.ts';
import { homeOf, resolveCwd } from './process-user.ts';
import { SandboxTerminals } from './pty-terminals.ts';

type ProcessImpl = ServiceImpl<typeof Process>;

/** What a selector names: a command (a background process) or a terminal. */
type Target = { kind: 'process'; view: ProcessView } | { kind: 'terminal'; view: TerminalView };

const KEEPALIVE = () => create(ProcessEventSchema, { event: { case: 'keepalive', value: {} } });

/** Core errors as Connect errors, for handlers that await core calls. */
async function translated<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw toConnectError(error);
  }
}

export function processService(services: Services): Partial<ProcessImpl> {
  const processes = services.sandbox.processes;
  const terminals = new SandboxTerminals(services.sandbox.terminals);
  const records = new ProcessRecords();

  /** The sandbox's running commands and terminals (its own only: both lists are the session's). */
  async function runningTargets(context: HandlerContext): Promise<Target[]> {
    const { principal, session } = callerOf(context);
    const [commands, ptys] = await translated(Promise.all([processes.list(principal, session.id), terminals.list(principal, session.id)]));
    // The code interpreter's JavaScript kernels are the facade's own, not the user's commands (E2B lists none).
    const own = commands.filter((view) => view.tag !== KERNEL_TAG);
    const targets = [...own.map((view): Target => ({ kind: 'process', view })), ...ptys.map((view): Target => ({ kind: 'terminal', view }))];
    return targets.filter((target) => target.view.status === 'running');
  }

  /**
   * The running process or terminal a selector names among the sandbox's own (another sandbox's pid is not found
   * here). Only running ones, as in envd: a pid is reused once its process ended (and sandboxes restored from one
   * snapshot hand out the same pids), so an ended process is no longer anyone's to name.
   */
  async function select(context: HandlerContext, selector: ProcessSelector | undefined): Promise<Target> {
    const wanted = selector?.selector;
    if (wanted?.case !== 'pid' && wanted?.case !== 'tag') throw new ConnectError('process.selector (pid or tag) is required', Code.InvalidArgument);
    const found = (await runningTargets(context)).find((target) =>
      wanted.case === 'pid' ? target.view.pid === wanted.value : (records.find(idOf(target))?.tag ?? tagOf(target)) === wanted.value,
    );
    if (!found) throw new ConnectError(`process ${wanted.case === 'tag' ? `tagged ${wanted.value}` : `with pid ${wanted.value}`} not found`, Code.NotFound);
    return found;
  }

  /** A command's events: its start, its output from the first byte kept, then its end. */
  async function* commandEvents(context: HandlerContext, view: ProcessView): AsyncGenerator<ProcessEvent> {
    const { principal, session } = callerOf(context);
    const { output } = await translated(processes.attach(principal, session.id, view.process_id));
    yield create(ProcessEventSchema, { event: { case: 'start', value: { pid: view.pid ?? 0 } } });
    for await (const item of output.read(0, { follow: true, signal: streamSignal(context) })) {
      if (item.kind === 'output') {
        yield create(ProcessEventSchema, { event: { case: 'data', value: { output: { case: item.event.stream, value: item.event.data } } } });
      } else if (item.kind === 'end') {
        const ended = await translated(processes.get(principal, session.id, view.process_id));
        yield endEventOf({ exitCode: ended.exit_code, signal: ended.signal, failure: ended.status === 'failed' ? (ended.error ?? 'failed') : null });
      }
    }
  }

  /** The events of a process or a terminal, with keep-alives while it is quiet. */
  function eventsOf(context: HandlerContext, target: Target): AsyncGenerator<ProcessEvent> {
    const { principal, session } = callerOf(context);
    const events =
      target.kind === 'process' ? commandEvents(context, target.view) : terminals.events(principal, session.id, target.view, streamSignal(context));
    return withKeepalive(events, keepaliveMsOf(context), KEEPALIVE);
  }

  async function startTarget(request: StartRequest, context: HandlerContext): Promise<Target> {
    const { principal, session } = callerOf(context);
    const config = request.process;
    if (!config?.cmd) throw new ConnectError('process.cmd is required', Code.InvalidArgument);
    const user = userOf(context);
    if (request.pty) {
      const view = await translated(terminals.start(principal, session.id, config, request.pty.size, user));
      records.remember(view.pty_id, config, request.tag, view.cwd);
      return { kind: 'terminal', view };
    }
    const view = await translated(
      processes.start(principal, session.id, {
        argv: [config.cmd, ...config.args],
        env: config.envs,
        cwd: resolveCwd(config.cwd, homeOf(user)),
        user,
        stdin: request.stdin === true,
        ...(request.tag ? { tag: request.tag } : {}),
      }),
    );
    records.remember(view.process_id, config, request.tag, view.cwd);
    return { kind: 'process', view };
  }

  return {
    async *start(request, context) {
      const target = await startTarget(request, context);
      for await (const event of eventsOf(context, target)) yield { event };
    },

    async *connect(request, context) {
      const target = await select(context, request.process);
      for await (const event of eventsOf(context, target)) yield { event };
    },

    async list(_request, context) {
      return { processes: (await runningTargets(context)).map((target) => infoOf(target, records)) };
    },

    async sendInput(request, context) {
      const { principal, session } = callerOf(context);
      const target = await select(context, request.process);
      const input = request.input?.input;
      if (input?.case !== 'stdin' && input?.case !== 'pty') throw new ConnectError('input (stdin or pty) is required', Code.InvalidArgument);
      if (target.kind === 'terminal') {
        // A terminal has one input: what is typed (envd's pty input); stdin bytes are typed there too.
        await translated(terminals.write(principal, session.id, target.view, input.value));
        return {};
      }
      if (input.case === 'pty') throw new ConnectError(`process ${target.view.pid} has no terminal: send its input as stdin`, Code.InvalidArgument);
      await translated(processes.writeStdin(principal, session.id, target.view.process_id, Buffer.from(input.value), false));
      return {};
    },

    async closeStdin(request, context) {
      const { principal, session } = callerOf(context);
      const target = await select(context, request.process);
      if (target.kind === 'terminal') throw new ConnectError(`process ${target.view.pid} is a terminal: send Ctrl-D (0x04) as its input`, Code.InvalidArgument);
      await translated(processes.writeStdin(principal, session.id, target.view.process_id, Buffer.alloc(0), true));
      return {};
    },

    async update(request, context) {
      const { principal, session } = callerOf(context);
      const target = await select(context, request.process);
      const size = request.pty?.size;
      if (!size) return {};
      if (target.kind !== 'terminal') throw new ConnectError(`process ${target.view.pid} has no terminal to resize`, Code.InvalidArgument);
      await translated(terminals.resize(principal, session.id, target.view, size));
      return {};
    },

    async sendSignal(request, context) {
      const { principal, session } = callerOf(context);
      const signal = request.signal === Signal.SIGKILL ? 'SIGKILL' : request.signal === Signal.SIGTERM ? 'SIGTERM' : null;
      if (!signal) throw new ConnectError('signal must be SIGTERM or SIGKILL', Code.InvalidArgument);
      const target = await select(context, request.process);
      if (target.kind === 'terminal') await translated(terminals.kill(principal, session.id, target.view));
      else await translated(processes.signal(principal, session.id, target.view.process_id, signal));
      return {};
    },
  };
}

function idOf(target: Target): string {
  return target.kind === 'process' ? target.view.process_id : target.view.pty_id;
}

/** The core's own tag of a process (one started through the native API); terminals have none. */
function tagOf(target: Target): string | null {
  return target.kind === 'process' ? target.view.tag : null;
}

/** A running process or terminal as envd lists it: what the SDK asked to run, or what the core knows of it. */
function infoOf(target: Target, records: ProcessRecords): Omit<ProcessInfo, '$typeName'> {
  const record = records.find(idOf(target));
  const tag = record?.tag ?? tagOf(target) ?? undefined;
  const argv = target.kind === 'process' ? (target.view.argv ?? ['/bin/bash', '-c', target.view.command ?? '']) : target.view.command;
  const config = record
    ? { cmd: record.cmd, args: record.args, envs: record.envs, cwd: target.view.cwd }
    : { cmd: argv[0] ?? '', args: argv.slice(1), envs: {}, cwd: target.view.cwd };
  return { pid: target.view.pid ?? 0, ...(tag ? { tag } : {}), config: create(ProcessConfigSchema, config) };
}
