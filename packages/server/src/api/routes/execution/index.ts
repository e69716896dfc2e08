import type { App, RouteContext } from '../../types.ts';
import { registerCancelExecution } from '../executions/cancel.ts';
import { registerGetExecution } from '../executions/get.ts';
import { registerListExecutions } from '../executions/list.ts';
import { registerExecuteAsync } from './execute-async.ts';
import { registerExecute } from './execute.ts';
import { registerKill } from './kill.ts';

export function registerExecutionRoutes(app: App, context: RouteContext): void {
  registerExecute(app, context);
  registerExecuteAsync(app, context);
  registerKill(app, context);
  registerListExecutions(app, context);
  registerGetExecution(app, context);
  registerCancelExecution(app, context);
}
