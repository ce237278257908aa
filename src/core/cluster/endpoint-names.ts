/** Endpoint names the timeline uses for itself. */
const RESERVED_NAMES = new Set(['router', 'harness']);
const ENDPOINT_NAME = /^[A-Za-z0-9_.-]+$/;

/** Throws unless `name` may name a node or client: file- and event-safe, and not one of the timeline's own. */
export function checkEndpointName(name: string, what: string): void {
  if (!ENDPOINT_NAME.test(name)) throw new Error(`${what} ${JSON.stringify(name)} must use only letters, digits, '_', '.' and '-'`);
  if (RESERVED_NAMES.has(name)) throw new Error(`${what} ${JSON.stringify(name)} is reserved for the timeline`);
}

/** Throws unless a cluster's node list and seed make sense: at least one node, valid distinct ids, an integer seed. */
export function checkClusterMembers(nodes: readonly string[], seed: number): void {
  if (nodes.length === 0) throw new Error('a cluster needs at least one node');
  if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  const seen = new Set<string>();
  for (const id of nodes) {
    checkEndpointName(id, 'node id');
    if (seen.has(id)) throw new Error(`node id ${id} is listed twice`);
    seen.add(id);
  }
}
