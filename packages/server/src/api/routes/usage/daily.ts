/** GET /v1/usage?days=N: the caller's executions, VM time and CPU time per UTC day (the console's usage charts). */
import { Type } from 'typebox';
import { dailyUsage, MAX_USAGE_DAYS } from '../../../core/usage.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export const DailyUsageList = Type.Object(
  {
    days: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date', description: 'The UTC day, YYYY-MM-DD' }),
        executions: Type.Integer({ description: 'Executions started that day' }),
        vm_seconds: Type.Number({ description: 'Seconds your VMs ran that day' }),
        cpu_seconds: Type.Number({ description: 'CPU seconds your code used in executions started that day' }),
        egress_attempts: Type.Integer({
          description: "Connection attempts in your VMs' egress logs that day (VMs under a restricted egress policy or with a vault)",
        }),
        egress_refused: Type.Integer({ description: 'Of those, refused by the policy' }),
        egress_bytes_sent: Type.Integer({ description: 'Bytes your VMs sent through the egress proxy (HTTP and HTTPS)' }),
        egress_bytes_received: Type.Integer(),
        vault_substituted: Type.Integer({ description: 'Requests a vault secret was swapped into' }),
        vault_flagged: Type.Integer({ description: 'Vault placeholders seen going where their secret is not bound' }),
      }),
      { description: 'Oldest first, today last; days without use are zeros' },
    ),
  },
  { $id: 'DailyUsageList', title: 'DailyUsageList' },
);

export function registerDailyUsage(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/usage',
    {
      schema: {
        tags: ['usage'],
        summary: 'Your usage per day',
        description: `Executions, VM seconds, CPU seconds, egress (attempts, refusals, bytes) and vault use per UTC day, for the last \`days\` days (today included, at most ${MAX_USAGE_DAYS}).`,
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({ days: Type.Integer({ minimum: 1, maximum: MAX_USAGE_DAYS, default: 14 }) }),
        response: authedResponses({ 200: Type.Ref('DailyUsageList') }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const days = await dailyUsage(services.database, services.clock, principalOf(request), request.query.days);
      return {
        days: days.map((d) => ({
          date: d.date,
          executions: d.executions,
          vm_seconds: d.vmSeconds,
          cpu_seconds: d.cpuSeconds,
          egress_attempts: d.egressAttempts,
          egress_refused: d.egressRefused,
          egress_bytes_sent: d.egressBytesSent,
          egress_bytes_received: d.egressBytesReceived,
          vault_substituted: d.vaultSubstituted,
          vault_flagged: d.vaultFlagged,
        })),
      };
    },
  );
}
