import { run } from '../cli';
import type { CliContext } from '../cli-context';
import { deployWebArgs } from './deploy-args';

/** Runs `podmin connect demo --provider local`, then deploys web with `image`; both must exit 0. */
export async function connectAndDeployWeb(ctx: CliContext, image = 'hello:v1'): Promise<void> {
  expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
  expect(await run(deployWebArgs(image), ctx)).toBe(0);
}
