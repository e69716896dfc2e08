/**
 * The in-sandbox daemon's `process.Process` service over sandboxd's background processes (core/processes.ts):
 * E2B's commands are processes of the sandbox's session, named to the SDK by their pid in the VM. Start and Connect
 * stream the output from the process's kept output (so nothing printed before the stream opened is lost), then its
 * end. Closing a stream leaves the process running, as E2B's `disconnect()` expects.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { ProcessView } from '../../../core/processes.ts';
import type { Services } from '../../../services.ts';
import { toConnectError } from '../errors.ts';
import { callerOf, keepaliveMsOf, userOf } from './caller.ts';
import type { Process } from './gen/process/process_pb.ts';
import { ProcessEventSchema, Signal, type ProcessEvent, type ProcessSelector, type StartRequest } from './gen/process/process_pb.ts';
import { withKeepalive } from './keepalive.ts';

type ProcessImpl = ServiceImpl<typeof Process>;

const KEEPALIVE = () => create(ProcessEventSchema, { event: { case: 'keepalive', value: {} } });

/** How the end of a process reads in E2B's `status` (Go's `ProcessState.String()` wording, which the SDK shows). */
function statusOf(view: ProcessView): string {
  if (view.signal) return `signal: ${view.signal.replace(/^SIG/, '').toLowerCase()}`;
  if (view.status === 'failed') return 'failed';
  return `exit status ${view.exit_code ?? -1}`;
}

function endEventOf(view: ProcessView): ProcessEvent {
  // A process killed by a signal exits, for a shell, with 128 + the signal's number; the agent reports the signal.
  const exitCode = view.exit_code ?? (view.signal ? -1 : -1);
  return create(ProcessEventSchema, {
    event: {
      case: 'end',
      value: { exitCode, exited: view.status === 'exited' && view.signal === null, status: statusOf(view), ...(view.error ? { error: view.error } : {}) },
    },
  });
}

export function processService(services: Services): Partial<ProcessImpl> {
  const processes = services.sandbox.processes;

  /** The process a selector names among the sandbox's (by pid, or by tag). */
  async function select(context: HandlerContext, selector: ProcessSelector | undefined): Promise<ProcessView> {
    const { principal, session } = callerOf(context);
    const all = await processes.list(principal, session.id);
    const wanted = selector?.selector;
    const found =
      wanted?.case === 'pid'
        ? (all.find((view) => view.pid === wanted.value && view.status === 'running') ?? all.find((view) => view.pid === wanted.value))
        : wanted?.case === 'tag'
          ? all.find((view) => view.tag === wanted.value && view.status === 'running')
          : undefined;
    if (!found)
      throw new ConnectError(`process ${wanted?.case === 'tag' ? `tagged ${wanted.value}` : `with pid ${wanted?.value ?? '?'}`} not found`, Code.NotFound);
    return found;
  }

  /** The process's events from its first output: its start, its output, then its end. */
  async function* eventsOf(context: HandlerContext, view: ProcessView): AsyncGenerator<ProcessEvent> {
    const { principal, session } = callerOf(context);
    const { output } = await processes.attach(principal, session.id, view.process_id);
    yield create(ProcessEventSchema, { event: { case: 'start', value: { pid: view.pid ?? 0 } } });
    const read = async function* (): AsyncGenerator<ProcessEvent> {
      for await (const item of output.read(0, { follow: true, signal: context.signal })) {
        if (item.kind === 'output') {
          yield create(ProcessEventSchema, { event: { case: 'data', value: { output: { case: item.event.stream, value: item.event.data } } } });
        } else if (item.kind === 'end') {
          yield endEventOf(await processes.get(principal, session.id, view.process_id));
        }
      }
    };
    yield* withKeepalive(read(), keepaliveMsOf(context), KEEPALIVE);
  }

  return {
    async *start(request: StartRequest, context) {
      const { principal, session } = callerOf(context);
      const config = request.process;
      if (!config?.cmd) throw new ConnectError('process.cmd is required', Code.InvalidArgument);
      if (request.pty) throw new ConnectError('terminals are not served yet', Code.Unimplemented);
      let view: ProcessView;
      try {
        view = await processes.start(principal, session.id, {
          argv: [config.cmd, ...config.args],
          env: config.envs,
          ...(config.cwd ? { cwd: config.cwd } : {}),
          user: userOf(context),
          stdin: request.stdin === true,
          ...(request.tag ? { tag: request.tag } : {}),
        });
      } catch (error) {
        throw toConnectError(error);
      }
      for await (const event of eventsOf(context, view)) yield { event };
    },

    async *connect(request, context) {
      const view = await select(context, request.process).catch((error: unknown) => Promise.reject(toConnectError(error)));
      for await (const event of eventsOf(context, view)) yield { event };
    },

    async list(_request, context) {
      const { principal, session } = callerOf(context);
      const running = (await processes.list(principal, session.id).catch((error: unknown) => Promise.reject(toConnectError(error)))).filter(
        (view) => view.status === 'running',
      );
      return {
        processes: running.map((view) => ({
          pid: view.pid ?? 0,
          ...(view.tag ? { tag: view.tag } : {}),
          config: { cmd: view.argv?.[0] ?? '/bin/bash', args: view.argv?.slice(1) ?? ['-c', view.command ?? ''], envs: {}, cwd: view.cwd },
        })),
      };
    },

    async sendInput(request, context) {
      const { principal, session } = callerOf(context);
      const view = await select(context, request.process);
      const input = request.input?.input;
      if (input?.case !== 'stdin') throw new ConnectError('input.stdin is required for a process without a terminal', Code.InvalidArgument);
      await processes
        .writeStdin(principal, session.id, view.process_id, Buffer.from(input.value), false)
        .catch((error: unknown) => Promise.reject(toConnectError(error)));
      return {};
    },

    async closeStdin(request, context) {
      const { principal, session } = callerOf(context);
      const view = await select(context, request.process);
      await processes
        .writeStdin(principal, session.id, view.process_id, Buffer.alloc(0), true)
        .catch((error: unknown) => Promise.reject(toConnectError(error)));
      return {};
    },

    async sendSignal(request, context) {
      const { principal, session } = callerOf(context);
      const view = await select(context, request.process);
      const signal = request.signal === Signal.SIGKILL ? 'SIGKILL' : request.signal === Signal.SIGTERM ? 'SIGTERM' : null;
      if (!signal) throw new ConnectError('signal must be SIGTERM or SIGKILL', Code.InvalidArgument);
      await processes.signal(principal, session.id, view.process_id, signal).catch((error: unknown) => Promise.reject(toConnectError(error)));
      return {};
    },
  };
}
