/**
 * Command-line entry point of the OCI image build, for operators and debugging:
 *
 *   node --import tsx packages/server/src/image/oci/cli.ts build REFERENCE --agent PATH [--cache-dir DIR]
 *        [--insecure-registry HOST[:PORT]]... [--allow-private-registry] [--username USER --password-stdin]
 *        [--disk-size-gib N]
 *
 * The password is read from stdin, never from the command line. Prints progress lines to stderr and, on success,
 * the OciGuestImage as one JSON line on stdout. Exit status: 0 success, 1 build failed, 2 usage error.
 */
import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { defaultCacheDir } from '../cache-layout.ts';
import { buildOciImage } from './build-oci-image.ts';
import { OciImageError } from './errors.ts';
import type { OciBuildProgress } from './types.ts';

const USAGE =
  'usage: cli.ts build REFERENCE --agent PATH [--cache-dir DIR] [--insecure-registry HOST]... [--allow-private-registry] [--username USER --password-stdin] [--disk-size-gib N]';

/** One human-readable stderr line per event. */
function formatProgress(event: OciBuildProgress): string {
  const time = `[${(event.elapsedMs / 1000).toFixed(1).padStart(6)}s]`;
  switch (event.type) {
    case 'step-start':
      return `${time} ${event.step}...`;
    case 'step-done':
      return `${time} ${event.step} done in ${(event.stepMs / 1000).toFixed(1)}s`;
    case 'output':
      return `${time} ${event.step} | ${event.line}`;
    case 'cached':
      return `${time} cached: ${event.digest} (${event.hash})`;
    case 'layer':
      return `${time} ${event.step}: ${event.event.type} ${event.event.layer}${'hash' in event.event ? ` ${event.event.hash}` : ''}${'stage' in event.event ? ` ${event.event.stage}` : ''}`;
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
        'insecure-registry': { type: 'string', multiple: true },
        'allow-private-registry': { type: 'boolean', default: false },
        username: { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
        'disk-size-gib': { type: 'string' },
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
  if (positionals.length !== 2 || positionals[0] !== 'build' || !values.agent || (values.username === undefined) !== !values['password-stdin']) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const password = values['password-stdin'] ? (await text(process.stdin)).replace(/\r?\n$/, '') : undefined;
  try {
    const image = await buildOciImage({
      reference: positionals[1] as string,
      agentBundlePath: values.agent,
      cacheDir: values['cache-dir'] ?? defaultCacheDir(),
      ...(values.username !== undefined && password !== undefined ? { credentials: { username: values.username, password } } : {}),
      insecureRegistries: values['insecure-registry'] ?? [],
      allowPrivateRegistries: values['allow-private-registry'],
      ...(values['disk-size-gib'] === undefined ? {} : { diskSizeGiB: Number(values['disk-size-gib']) }),
      onProgress: (event) => process.stderr.write(`${formatProgress(event)}\n`),
    });
    process.stdout.write(`${JSON.stringify(image)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof OciImageError) {
      process.stderr.write(`OCI image build failed${error.step ? ` at ${error.step}` : ''}: ${error.code}: ${error.message}\n`);
      for (const line of error.outputTail) process.stderr.write(`  | ${line}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
