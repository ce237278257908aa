import { workspaceDiff } from '../../core/verify/verify';
import { EXIT } from '../output';

export async function commandDiff(dir: string): Promise<number> {
  process.stdout.write(await workspaceDiff(dir));
  return EXIT.ok;
}
