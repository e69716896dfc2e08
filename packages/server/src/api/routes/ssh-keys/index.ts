import type { App, RouteContext } from '../../types.ts';
import type { SshGatewayAddress } from '../../../ssh/ssh-gateway.ts';
import { registerCreateSshKey } from './create.ts';
import { registerDeleteSshKey } from './delete.ts';
import { registerGetSshKey } from './get.ts';
import { registerSshInfo } from './info.ts';
import { registerListSshKeys } from './list.ts';

/** `gateway`: the running SSH gateway's address, null while it is off (read per request: it binds at start). */
export function registerSshKeyRoutes(app: App, context: RouteContext, gateway: () => SshGatewayAddress | null): void {
  registerCreateSshKey(app, context);
  registerListSshKeys(app, context);
  registerGetSshKey(app, context);
  registerDeleteSshKey(app, context);
  registerSshInfo(app, context, gateway);
}
