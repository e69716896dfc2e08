/**
 * The built-in templates' image flavours, from their recipe folders under `packages/server/images/`. Each adds
 * Debian packages (its own cached base layer) and a few files to the default image; kernel, agent and guest-init
 * stay the default image's, so a flavour boots under the same contract.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageBuildError } from './errors.ts';
import { defaultRecipesDir, parseList } from './recipes.ts';
import type { ImageFlavour } from './types.ts';

/** Where the browser template's start script is installed in the guest. */
export const BROWSER_START_PATH = '/opt/sandboxd/browser/start-browser';

/**
 * The browser template's image: Debian's `chromium` and fonts, and `start-browser`, which the engine runs once in
 * the VM its snapshot is made of. Chromium with its libraries is ~650 MiB, so the disk is 2 GiB.
 */
export async function browserFlavour(recipesDir: string = defaultRecipesDir()): Promise<ImageFlavour> {
  const read = async (relative: string): Promise<Buffer> => {
    try {
      return await readFile(join(recipesDir, relative));
    } catch (error) {
      throw new ImageBuildError('IMAGE_INPUT_INVALID', `cannot read recipe file ${join(recipesDir, relative)}`, { cause: error });
    }
  };
  const [packages, startScript] = await Promise.all([read('browser/packages.txt'), read('browser/start-browser')]);
  return {
    name: 'browser',
    packages: parseList(packages),
    files: [{ path: BROWSER_START_PATH, content: startScript, mode: 0o755 }],
    diskSizeGiB: 2,
  };
}
