/**
 * E2B's outbound network settings on create, as a sandboxd egress policy (an allowlist) for the sandbox's session:
 * - `allow_internet_access: false`: nothing outside is reachable (the empty allowlist);
 * - `network.denyOut: ["0.0.0.0/0"]` with `allowOut`: only what `allowOut` names. Its addresses and CIDRs are open on
 *   every port, as in E2B; its domain names (`example.com`, `*.example.com`) over HTTP and HTTPS only (sandboxd's
 *   proxy matches names on those), where E2B matches them on any port.
 * A `denyOut` that blocks some destinations but not all (a blocklist) has no allowlist equivalent: 400. Without
 * any of these, the sandbox gets sandboxd's default policy (open unless the operator set SANDBOXD_EGRESS_DEFAULT).
 */
import { isIPv4 } from 'node:net';
import type { Static } from 'typebox';
import type { EgressPolicyInput } from '../../../core/egress-policy.ts';
import { AppError } from '../../../core/errors.ts';
import type { NewSandbox } from './schemas.ts';

/** E2B's name for "every address" in `denyOut` (its `ALL_TRAFFIC`). */
const ALL_TRAFFIC = '0.0.0.0/0';

/** The allowlist policy the create request asks for, or null when it asks for none (the default applies). */
export function egressPolicyOf(body: Static<typeof NewSandbox>): EgressPolicyInput | null {
  const denyOut = body.network?.denyOut ?? [];
  const allowOut = body.network?.allowOut ?? [];
  const denyAll = body.allow_internet_access === false || denyOut.includes(ALL_TRAFFIC);
  if (!denyAll) {
    if (denyOut.length > 0) {
      throw new AppError(
        'BAD_REQUEST',
        `network.denyOut must be ["${ALL_TRAFFIC}"] (with allowOut naming what stays reachable): sandboxd's egress policies are allowlists`,
      );
    }
    return null;
  }
  const allowed = body.allow_internet_access === false ? [] : allowOut;
  const isAddress = (entry: string) => isIPv4(entry.split('/')[0] ?? '');
  return {
    allowPackageManagers: false,
    allowHttp: true,
    allowHttps: true,
    allowedDomains: allowed.filter((entry) => !isAddress(entry)),
    allowedCidrs: allowed.filter(isAddress),
  };
}
