/**
 * Run the agent's sources under tsx with `node --import tsx --import <this file>`: it registers the hooks that
 * load the guest's Python files (`import source from './file.py'`) as text, as the bundle does.
 */
import { register } from 'node:module';

register('./text-import-hooks.mjs', import.meta.url);
