import type { App, RouteContext } from '../../types.ts';
import { registerCreateNetwork } from './create.ts';
import { registerDeleteNetwork } from './delete.ts';
import { registerGetNetwork } from './get.ts';
import { registerListNetworks } from './list.ts';
import { registerNetworkMembers } from './members.ts';

export function registerNetworkRoutes(app: App, context: RouteContext): void {
  registerCreateNetwork(app, context);
  registerListNetworks(app, context);
  registerGetNetwork(app, context);
  registerDeleteNetwork(app, context);
  registerNetworkMembers(app, context);
}
