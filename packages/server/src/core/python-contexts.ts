/**
 * A session's Python contexts: each is an interpreter of its own in the session's VM, with its own variables and
 * imports (E2B's code contexts). Every session has its `default` context (what an execute without `context_id`
 * runs in); a user may make more. A context's record outlives its interpreter: when the session's VM ends, the
 * next run in the context starts a fresh interpreter (in the context's `cwd`), as the default context does.
 */
import path from 'node:path/posix';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError, InputError, notFound } from './errors.ts';
import { GUEST_HOME } from './files.ts';
import { newPythonContextId } from './ids.ts';
import { agentContextId } from './python-runs.ts';
import type { SessionService } from './sessions.ts';
import { pythonContextOf, type VmService } from './vms/index.ts';
import type { Language, PythonContext, Session, Vm } from '../model.ts';
import type { Database } from '../store/database.ts';
import { countPythonContexts, deletePythonContext, findPythonContext, insertPythonContext, listPythonContexts } from '../store/python-contexts-store.ts';

/** The id of every session's own context. */
export const DEFAULT_CONTEXT_ID = 'default';
/** Extra contexts a session may hold (each live one is an interpreter, ~10–60 MB of the VM's memory once used). */
export const MAX_CONTEXTS_PER_SESSION = 16;

/** A context as the API shows it (the default one has no record: no creation time). */
export interface ContextView {
  id: string;
  sessionId: string;
  language: 'python';
  cwd: string;
  createdAt: string | null;
}

export class PythonContextService {
  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly clock: Clock,
  ) {}

  /** Makes a context in the caller's session; its interpreter starts with its first run. */
  async create(principal: Principal, sessionId: string, request: { cwd?: string }): Promise<ContextView> {
    const session = await this.sessions.getOwned(principal, sessionId);
    if ((await countPythonContexts(this.database.db, session.id)) >= MAX_CONTEXTS_PER_SESSION)
      throw new AppError('QUOTA_EXCEEDED', `session ${session.id} already has ${MAX_CONTEXTS_PER_SESSION} contexts besides its default one: delete one first`);
    const context = await insertPythonContext(this.database.db, {
      id: newPythonContextId(),
      userId: principal.userId,
      sessionId: session.id,
      cwd: path.resolve(GUEST_HOME, request.cwd ?? GUEST_HOME),
      createdAt: this.clock.now().toISOString(),
    });
    return view(session, context);
  }

  /** The session's contexts, its default one first. */
  async list(principal: Principal, sessionId: string): Promise<ContextView[]> {
    const session = await this.sessions.getOwned(principal, sessionId);
    return [view(session, null), ...(await listPythonContexts(this.database.db, session.id)).map((context) => view(session, context))];
  }

  async get(principal: Principal, sessionId: string, contextId: string): Promise<ContextView> {
    const session = await this.sessions.getOwned(principal, sessionId);
    return view(session, await this.find(principal, session, contextId));
  }

  /** Ends a context's interpreter (its variables and imports are gone; the next run starts a fresh one). */
  async restart(principal: Principal, sessionId: string, contextId: string): Promise<ContextView> {
    const { session, vm } = await this.sessions.getOwnedWithVm(principal, sessionId);
    const context = await this.find(principal, session, contextId);
    await this.endInterpreter(session, vm, context);
    return view(session, context);
  }

  /** Deletes an extra context and ends its interpreter; the default context cannot be deleted (restart it). */
  async remove(principal: Principal, sessionId: string, contextId: string): Promise<void> {
    const { session, vm } = await this.sessions.getOwnedWithVm(principal, sessionId);
    if (contextId === DEFAULT_CONTEXT_ID) throw new AppError('CONFLICT', 'the default context cannot be deleted: restart it to clear its state');
    const context = await this.find(principal, session, contextId);
    // The interpreter first: if the VM's agent fails, the record stays and a retry can end it.
    await this.endInterpreter(session, vm, context);
    await deletePythonContext(this.database.db, session.id, context!.id);
  }

  /**
   * The extra context an execute names (null: the default one): the caller's, of that session. 404 for another
   * user's, another session's, or one named without a session; 422 with a language other than Python.
   */
  async forExecute(principal: Principal, language: Language, contextId: string | null | undefined, session: Session | null): Promise<PythonContext | null> {
    if (!contextId || contextId === DEFAULT_CONTEXT_ID) return null;
    if (language !== 'python')
      throw new InputError([
        { loc: ['body', 'context_id'], msg: 'A context is a Python interpreter: give context_id only with language python', type: 'value_error' },
      ]);
    if (!session) throw notFound(`context ${contextId}`);
    return (await this.find(principal, session, contextId))!;
  }

  private async find(principal: Principal, session: Session, contextId: string): Promise<PythonContext | null> {
    if (contextId === DEFAULT_CONTEXT_ID) return null;
    const context = await findPythonContext(this.database.db, principal.userId, session.id, contextId);
    if (!context) throw notFound(`context ${contextId} in session ${session.id}`);
    return context;
  }

  /** Kills the context's interpreter in the session's live VM, if it has one (no VM: there is nothing to end). */
  private async endInterpreter(session: Session, vm: Vm | undefined, context: PythonContext | null): Promise<void> {
    const agent = vm?.status === 'active' ? this.vms.agentOf(vm) : null;
    if (!agent || !vm) return;
    await agent.resetPython(agentContextId(pythonContextOf(vm) ?? session.id, context));
  }
}

function view(session: Session, context: PythonContext | null): ContextView {
  return context
    ? { id: context.id, sessionId: session.id, language: 'python', cwd: context.cwd, createdAt: context.createdAt }
    : { id: DEFAULT_CONTEXT_ID, sessionId: session.id, language: 'python', cwd: GUEST_HOME, createdAt: null };
}
