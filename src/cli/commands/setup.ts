import { Option } from 'commander';
import { z } from 'zod';
import { loadCatalog } from '../../core/bugs/catalog';
import { connectEngine } from '../../core/cluster';
import { buildCliImage } from '../../core/cluster/docker/cli-image';
import { setupUpstream } from '../../core/cluster/upstream/setup';
import { UserError } from '../../core/errors';
import { optionGroup, options, outputOptions, type OptionsOf } from '../options';
import { EXIT, printJson, progress, say } from '../output';

export const setupOptions = options(
  outputOptions(),
  optionGroup(
    [new Option('--no-build', "install only; build each system's source at its first trial"), new Option('--verbose', "show apt-get's and the compiler's output as it comes")],
    z.object({ build: z.boolean().default(true), verbose: z.boolean().optional() }),
  ),
);

/**
 * `ddbench setup upstream`: the Debian packages, sources and builds the real upstream
 * systems need. `ddbench setup image`: the ddbench CLI image (deploy/) on the Docker
 * engine, built without a registry from this machine's Node.js and this package.
 */
export async function commandSetup(what: string, o: OptionsOf<typeof setupOptions>): Promise<number> {
  if (what === 'image') return setupImage(o);
  if (what !== 'upstream') throw new UserError(`nothing to set up called "${what}"; the set-up steps are \`ddbench setup upstream\` and \`ddbench setup image\``);
  const systems = (await loadCatalog()).systems.filter((s) => s.kind === 'upstream');
  if (systems.length === 0) throw new UserError('this bug set has no upstream systems (bugs/upstream/<system>/system.json)');
  const result = await setupUpstream(systems, {
    build: o.build,
    onStep: (s) => progress(`${s.system ? `${s.system}: ` : ''}${s.what}`),
    ...(o.verbose && { onLine: (line: string) => progress(`  ${line}`) }),
  });
  if (o.json) printJson(result);
  else {
    say(`installed: ${result.packages.join(' ')}`);
    for (const b of result.builds) say(`${b.system}: built ${b.build.binary} (${b.build.cached ? 'cached' : `${(b.build.durationMs / 1000).toFixed(1)} s`})`);
  }
  return EXIT.ok;
}

async function setupImage(o: OptionsOf<typeof setupOptions>): Promise<number> {
  const image = await buildCliImage(await connectEngine(), { onProgress: progress });
  if (o.json) printJson(image);
  else say(`${image.ref} (${image.built ? `built in ${(image.durationMs / 1000).toFixed(1)} s` : 'cached'}, ${Math.round(image.sizeBytes / 1e6)} MB)`);
  return EXIT.ok;
}
