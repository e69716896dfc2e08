/**
 * sandbox contexts ls | create | restart | rm: a session's Python contexts, interpreters of their own in its VM
 * (`sandbox exec --context ID` runs code in one). Every session has its `default` context.
 */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { table } from '../output.ts';

export function registerContexts(program: Command, context: (options: GlobalOptions) => Context): void {
  const contexts = program.command('contexts').description("a session's Python contexts: interpreters with variables of their own (exec --context)");

  contexts
    .command('ls', { isDefault: true })
    .description("list the session's contexts (default first)")
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.contexts.list(ctx.requireSession(options.session));
      ctx.out.result(list, () =>
        table(
          ['CONTEXT', 'CWD', 'CREATED'],
          list.map((c) => [c.id, c.cwd, c.created_at ?? '']),
        ),
      );
    });

  contexts
    .command('create')
    .description('make a context; prints its id')
    .option('-s, --session <id>', 'session (default: the current one)')
    .option('--cwd <dir>', 'where its interpreter starts (default /root)')
    .action(async (options: { session?: string; cwd?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const created = await ctx.client.contexts.create(ctx.requireSession(options.session), options.cwd ? { cwd: options.cwd } : {});
      ctx.out.result(created, () => created.id);
    });

  contexts
    .command('restart')
    .description("clear a context's state (its interpreter ends; the next run starts afresh)")
    .argument('<context>', 'context id (or default)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (contextId: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const info = await ctx.client.contexts.restart(ctx.requireSession(options.session), contextId);
      ctx.out.result(info, () => `Restarted ${info.id}.`);
    });

  contexts
    .command('rm')
    .description('delete a context and end its interpreter')
    .argument('<context>', 'context id')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (contextId: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.contexts.delete(ctx.requireSession(options.session), contextId);
      ctx.out.result({ deleted: contextId }, () => `Deleted ${contextId}.`);
    });
}
