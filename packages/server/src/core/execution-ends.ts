/**
 * How an execution ends without its result: the error texts it is recorded with (its VM paused or ended, its
 * server stopped) and the step that ends a VM's or a node's in-flight executions in the caller's transaction. Both
 * ExecutionService and VmService (VM ends, pauses, node deaths) use it, so neither imports the other for it.
 */
import type { Clock } from './clock.ts';
import { recordEvent } from './events.ts';
import type { Execution, VmEndReason } from '../model.ts';
import { failInFlightExecutions } from '../store/executions-store.ts';
import type { Executor } from '../store/database.ts';

/** Why an execution ended without its result when its server stopped: crashed or killed, or shut down. */
export const RESTARTED_ERROR = 'the server stopped (it crashed or was killed) before the execution finished; its output is lost';
export const SHUT_DOWN_ERROR = 'the server was shut down before the execution finished; its output is lost';

/** What an execution cancelled by its owner is recorded with (its process was killed; the VM goes on). */
export const CANCELLED_ERROR = 'cancelled by its owner: the run was stopped in the VM, which goes on';

/** What an execution that was running when its VM was paused is recorded with. */
export const PAUSED_ERROR = 'the VM was paused while the execution ran; its process goes on when the VM resumes, but its output from then on is not recorded';

/** Why an execution that was running in a VM ended without its result. */
export function endedExecutionError(reason: Exclude<VmEndReason, 'failed'>): string {
  switch (reason) {
    case 'expired':
      return 'the VM reached the end of its lifetime before the execution finished';
    case 'agent_lost':
      return "the VM's agent could not be reached again, so the VM was killed before the execution finished";
    case 'server_restart':
      return 'the server restarted before the execution finished; its output is lost';
    case 'node_lost':
      return "the VM's node stopped answering (declared dead by the cluster) before the execution finished; its output is lost";
    case 'server_shutdown':
      return SHUT_DOWN_ERROR;
    default:
      return `the VM ended (${reason}) before the execution finished`;
  }
}

/** Records the event of an execution that reached a final status (`execution.completed` or `.failed`). */
export async function recordExecutionEnd(db: Executor, clock: Clock, execution: Execution): Promise<void> {
  const data = {
    execution_id: execution.id,
    session_id: execution.sessionId,
    vm_id: execution.vmId,
    language: execution.language,
    exit_code: execution.exitCode,
    error: execution.error,
    execution_time: execution.executionTime,
  };
  const event = { userId: execution.userId, subjectId: String(execution.id) };
  if (execution.status === 'completed') await recordEvent(db, clock, { ...event, type: 'execution.completed', data: { ...data, status: execution.status } });
  else if (execution.status === 'failed' || execution.status === 'timeout')
    await recordEvent(db, clock, { ...event, type: 'execution.failed', data: { ...data, status: execution.status } });
}

/**
 * Ends the in-flight executions of a VM, or of a node, as failed with `error`, each with its event, in the
 * caller's transaction; answers how many.
 */
export async function endInFlightExecutions(db: Executor, clock: Clock, of: { vmId: string } | { nodeId: string }, error: string): Promise<number> {
  const ended = await failInFlightExecutions(db, of, error, clock.now().toISOString());
  for (const execution of ended) await recordExecutionEnd(db, clock, execution);
  return ended.length;
}
