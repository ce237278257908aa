import fs from 'node:fs';
import path from 'node:path';

const PACKAGE_NAME = 'ddbench';
const HOST_IN_PACKAGE = ['dist', 'runtime', 'live-host.js'];

/**
 * Finds the built live host by walking up from `from` (this module's folder: src/core/cluster
 * under tsx, dist/ in a bundle) to the package root, the folder whose package.json is named ddbench.
 */
export function locateLiveHost(from: string = __dirname): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (packageName(path.join(dir, 'package.json')) === PACKAGE_NAME) {
      const host = path.join(dir, ...HOST_IN_PACKAGE);
      if (!fs.existsSync(host)) throw new Error(`the live host ${host} is missing: run \`npm run build\` in ${dir} first`);
      return host;
    }
    if (path.dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package (a package.json named "${PACKAGE_NAME}") above ${from}`);
  }
}

function packageName(file: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed && typeof parsed.name === 'string' ? parsed.name : undefined;
  } catch {
    return undefined;
  }
}
