import type { App, RouteContext } from '../../types.ts';
import { registerCreateTemplate } from './create.ts';
import { registerDeleteTemplate } from './delete.ts';
import { registerGetTemplate } from './get.ts';
import { registerListTemplates } from './list.ts';
import { registerTemplateLogs } from './logs.ts';

export function registerTemplateRoutes(app: App, context: RouteContext): void {
  registerCreateTemplate(app, context);
  registerListTemplates(app, context);
  registerGetTemplate(app, context);
  registerTemplateLogs(app, context);
  registerDeleteTemplate(app, context);
}
