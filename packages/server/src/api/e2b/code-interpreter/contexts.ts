/**
 * The code interpreter's contexts (`createCodeContext`, `listCodeContexts`, `restartCodeContext`,
 * `removeCodeContext`): sandboxd's Python contexts of the sandbox's session (core/python-contexts.ts), each an
 * interpreter of its own. The session's own interpreter is the context `default` (what a run without a context
 * uses); it can be restarted, not removed. JavaScript contexts are kernels of their own (js-contexts.ts); a bash run
 * keeps no state to hold (languages.ts). As on E2B, these take no access token (the SDK sends none): admission is the port's.
 */
import type { Static } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import type { ContextView } from '../../../core/python-contexts.ts';
import type { Services } from '../../../services.ts';
import type { App } from '../../types.ts';
import type { SandboxCaller } from '../sandbox-traffic/access.ts';
import { setEnvCode } from './env-vars.ts';
import { isJsContextId } from './js-contexts.ts';
import { DEFAULT_JS_CWD, jsContexts } from './js-registry.ts';
import { e2bLanguageOf } from './languages.ts';
import { ContextParams, NewContextBody } from './schemas.ts';

/** Where E2B's contexts start unless told otherwise: its user's home (the image's account `user`). */
const DEFAULT_CWD = '/home/user';

/** A context as the SDK reads it (`Context`: id, language, cwd). */
function contextOf(view: ContextView) {
  return { id: view.id, language: view.language, cwd: view.cwd };
}

/**
 * Gives a context's fresh interpreter the sandbox's env vars (its `envVars` at create), as E2B's contexts have them:
 * sandboxd gives them only to the session's own interpreter, once per VM, so a new context and a restarted one
 * (the default one included) get them here. The run also starts the interpreter (in its cwd).
 */
async function applySandboxEnv(services: Services, caller: SandboxCaller, contextId: string): Promise<void> {
  const env = caller.session.env;
  if (Object.keys(env).length === 0) return;
  const run = await services.sandbox.executions.execute(caller.principal, {
    sessionId: caller.session.id,
    language: 'python',
    source: setEnvCode(env),
    timeoutSeconds: 60,
    contextId,
  });
  if (run.status !== 'completed') throw new AppError('INTERNAL_ERROR', `the context could not get the sandbox's env vars: ${run.error ?? run.status}`);
}

export function registerContexts(scope: App, services: Services): void {
  const contexts = services.sandbox.contexts;

  scope.post('/contexts', { schema: { hide: true, body: NewContextBody } }, async (request) => {
    const caller = request.e2bCaller!;
    const body: Static<typeof NewContextBody> = request.body;
    const language = e2bLanguageOf(body?.language);
    if (language === 'javascript') {
      const context = jsContexts(services).create(caller, body?.cwd ?? DEFAULT_JS_CWD);
      return { id: context.id, language: 'javascript', cwd: context.cwd };
    }
    if (language !== 'python')
      throw new AppError('BAD_REQUEST', `contexts are Python or JavaScript kernels: a ${language} run keeps no state between runs here (see docs/e2b.md)`);
    const context = await contexts.create(caller.principal, caller.session.id, { cwd: body?.cwd ?? DEFAULT_CWD });
    await applySandboxEnv(services, caller, context.id);
    return contextOf(context);
  });

  scope.get('/contexts', { schema: { hide: true } }, async (request) => {
    const { principal, session } = request.e2bCaller!;
    const javascript = jsContexts(services)
      .list(session.id)
      .map((context) => ({ id: context.id, language: 'javascript', cwd: context.cwd }));
    return [...(await contexts.list(principal, session.id)).map(contextOf), ...javascript];
  });

  scope.post('/contexts/:contextId/restart', { schema: { hide: true, params: ContextParams } }, async (request, reply) => {
    const caller = request.e2bCaller!;
    if (isJsContextId(request.params.contextId)) {
      await jsContexts(services).restart(caller, jsContexts(services).find(caller, request.params.contextId, DEFAULT_JS_CWD));
      return reply.code(204).send();
    }
    await contexts.restart(caller.principal, caller.session.id, request.params.contextId);
    await applySandboxEnv(services, caller, request.params.contextId);
    return reply.code(204).send();
  });

  scope.delete('/contexts/:contextId', { schema: { hide: true, params: ContextParams } }, async (request, reply) => {
    const caller = request.e2bCaller!;
    if (isJsContextId(request.params.contextId)) {
      await jsContexts(services).remove(caller, jsContexts(services).find(caller, request.params.contextId, DEFAULT_JS_CWD));
      return reply.code(204).send();
    }
    await contexts.remove(caller.principal, caller.session.id, request.params.contextId);
    return reply.code(204).send();
  });
}
