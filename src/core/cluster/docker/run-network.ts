import net from 'node:net';
import type Docker from 'dockerode';
import { UserError } from '../../errors';
import { engineAddress, idempotent, statusOf } from './engine';

export interface RunNetwork {
  id: string;
  name: string;
  /** The bridge's address on the engine's host: where the harness's router listens for the nodes. */
  gateway: string;
}

const ATTEMPTS = 5;

function ipamOf(info: Docker.NetworkInspectInfo): { subnet: string; gateway: string } {
  const config = info.IPAM?.Config?.[0];
  if (config?.Subnet === undefined || config.Gateway === undefined) throw new Error(`network ${info.Name} has no IPv4 subnet and gateway`);
  return { subnet: config.Subnet, gateway: config.Gateway };
}

/**
 * Creates the run's bridge network with an explicit subnet, which the engine requires
 * before a container can be reconnected with its old address (a disconnect fault must
 * not move the node). The subnet is the one the engine itself picks for a throw-away
 * network, so it avoids the host's routes as well as any automatic choice would; if
 * another run takes it meanwhile, we try again.
 */
export async function createRunNetwork(docker: Docker, name: string, labels: Record<string, string>): Promise<RunNetwork> {
  for (let attempt = 1; ; attempt++) {
    const probe = await docker.createNetwork({ Name: `${name}-probe`, Driver: 'bridge', Labels: labels, CheckDuplicate: true });
    let ipam: { subnet: string; gateway: string };
    try {
      ipam = ipamOf(await probe.inspect());
    } finally {
      await idempotent(() => probe.remove());
    }
    try {
      const network = await docker.createNetwork({
        Name: name,
        Driver: 'bridge',
        CheckDuplicate: true,
        Labels: labels,
        IPAM: { Driver: 'default', Config: [{ Subnet: ipam.subnet, Gateway: ipam.gateway }] },
        // Nodes talk to each other and to the router only; nothing of theirs is NATed out to the world.
        Options: { 'com.docker.network.bridge.enable_ip_masquerade': 'false' },
      });
      return { id: network.id, name, gateway: ipam.gateway };
    } catch (err) {
      // 403: "Pool overlaps with other one on this address space".
      if (statusOf(err) !== 403 || attempt >= ATTEMPTS) throw err;
    }
  }
}

/**
 * The router listens on the gateway address, which only the engine's host has. With a
 * remote engine (DOCKER_HOST on another machine, or a VM) it is not ours, and the
 * nodes could not reach a router here. Binding is the test: until a container joins,
 * the bridge has no carrier and the OS does not list its address as up.
 */
export async function checkGatewayIsLocal(gateway: string): Promise<void> {
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, gateway, resolve);
    });
  } catch (err) {
    throw new UserError(
      `the docker network's gateway ${gateway} is not an address of this machine (${err instanceof Error ? err.message : String(err)}), so its containers cannot reach DDBench's router here: the engine (${engineAddress()}) runs on another machine or in a VM (Docker Desktop, rootless Docker). Run ddbench on the engine's host, or use --backend process.`,
    );
  } finally {
    server.close();
  }
}
