/**
 * Command-line entry point of the guest image build, used by the setup script:
 *
 *   node packages/server/dist/image/cli.js ensure --agent PATH [--cache-dir DIR]
 *        [--flavour browser|desktop|docker] [--disk-size-gib N] [--kernel-version V] [--mirror URL_OR_DEB_LINE]...
 *
 * Prints progress lines to stderr and, on success, the GuestImage as one JSON line on stdout.
 * Exit status: 0 success, 1 build failed, 2 usage error.
 */
import { parseArgs } from 'node:util';
import { defaultCacheDir, FLAVOURS, ensureGuestImage, ImageBuildError, type ImageBuildProgress } from './index.ts';

const USAGE =
  'usage: cli.ts ensure --agent PATH [--flavour browser|desktop|docker] [--cache-dir DIR] [--disk-size-gib N] [--kernel-version V] [--mirror URL]...';

/** One human-readable stderr line per event; command output is indented under its stage. */
function formatProgress(event: ImageBuildProgress): string {
  const time = `[${(event.elapsedMs / 1000).toFixed(1).padStart(6)}s]`;
  switch (event.type) {
    case 'layer-cached':
      return `${time} ${event.layer}: cached (${event.hash})`;
    case 'lock-wait':
      return `${time} ${event.layer}: another process is building ${event.hash}, waiting for it`;
    case 'stage-start':
      return `${time} ${event.layer}: ${event.stage}...`;
    case 'stage-done':
      return `${time} ${event.layer}: ${event.stage} done in ${(event.stageMs / 1000).toFixed(1)}s`;
    case 'output':
      return `${time} ${event.layer}/${event.stage} | ${event.line}`;
    case 'layer-built':
      return `${time} ${event.layer}: built ${event.hash} in ${(event.buildMs / 1000).toFixed(1)}s`;
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        agent: { type: 'string' },
        'cache-dir': { type: 'string' },
        'disk-size-gib': { type: 'string' },
        'kernel-version': { type: 'string' },
        mirror: { type: 'string', multiple: true },
        flavour: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'ensure' || !values.agent) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const diskSizeGiB = values['disk-size-gib'] === undefined ? undefined : Number(values['disk-size-gib']);
  const flavour = values.flavour === undefined ? undefined : Object.hasOwn(FLAVOURS, values.flavour) ? FLAVOURS[values.flavour] : null;
  if (flavour === null) {
    process.stderr.write(`unknown flavour ${values.flavour} (known: ${Object.keys(FLAVOURS).join(', ')})\n${USAGE}\n`);
    return 2;
  }
  try {
    const image = await ensureGuestImage({
      cacheDir: values['cache-dir'] ?? defaultCacheDir(),
      agentBundlePath: values.agent,
      ...(flavour ? { flavour: await flavour() } : {}),
      diskSizeGiB,
      kernelVersion: values['kernel-version'],
      mirrors: values.mirror,
      onProgress: (event) => process.stderr.write(`${formatProgress(event)}\n`),
    });
    process.stdout.write(`${JSON.stringify(image)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ImageBuildError) {
      const where = error.layer ? ` (${error.layer}${error.stage ? `/${error.stage}` : ''})` : '';
      process.stderr.write(`image build failed${where}: ${error.code}: ${error.message}\n`);
      for (const line of error.outputTail) process.stderr.write(`  | ${line}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
