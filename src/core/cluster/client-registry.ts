import { checkEndpointName } from './endpoint-names';

/**
 * A cluster's open clients by name. A name is taken from the moment a client starts
 * to open until it closes; each opening of a name gets its own message-id prefix
 * (`c`, then `c#1`, `c#2`, ...), so a reopened client's ids never repeat an earlier one's.
 */
export class ClientRegistry<C extends { close(): void }> {
  private readonly open = new Map<string, C | undefined>();
  private readonly opens = new Map<string, number>();
  private readonly nodes: ReadonlySet<string>;

  constructor(nodes: readonly string[]) {
    this.nodes = new Set(nodes);
  }

  /** Checks and takes the name for a client about to open; returns its message-id prefix. */
  reserve(name: string): string {
    checkEndpointName(name, 'client name');
    if (this.nodes.has(name)) throw new Error(`client name ${name} is a node id`);
    if (this.open.has(name)) throw new Error(`a client named ${name} is already open; close it or pick another name`);
    const opens = this.opens.get(name) ?? 0;
    this.opens.set(name, opens + 1);
    this.open.set(name, undefined);
    return opens === 0 ? name : `${name}#${opens}`;
  }

  /** Records the client that opened under a reserved name. */
  opened(name: string, client: C): C {
    this.open.set(name, client);
    return client;
  }

  /** Frees the name: its client closed, or failed to open. */
  release(name: string): void {
    this.open.delete(name);
  }

  get(name: string): C | undefined {
    return this.open.get(name);
  }

  /** Closes every open client. */
  closeAll(): void {
    for (const client of [...this.open.values()]) client?.close();
  }
}
