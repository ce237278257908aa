// gossiper.js — after Cassandra's Gossiper, EndpointState and FailureDetector.
// Every node keeps an EndpointState per endpoint: a heartbeat (generation,
// version) and versioned application states (STATUS, TOKENS). Once a round it
// bumps its own heartbeat and runs the three-way exchange GossipDigestSyn →
// GossipDigestAck → GossipDigestAck2 with a random live endpoint (and now and
// then an unreachable one or a seed). An endpoint whose heartbeat stops moving
// for convictMs is convicted and marked down.

const MAX_VERSION = Number.MAX_SAFE_INTEGER;
/** How long a shadow round waits for the contact nodes' answers. */
const SHADOW_REQUEST_TIMEOUT_MS = 1000;

export const STATUS = 'STATUS';
export const TOKENS = 'TOKENS';

/** A wire copy of an endpoint state. */
function copyOf(st) {
  return { generation: st.generation, version: st.version, appStates: structuredClone(st.appStates) };
}

export function maxVersion(st) {
  let v = st.version;
  for (const a of Object.values(st.appStates)) v = Math.max(v, a.version);
  return v;
}

export function statusOf(st) {
  return st?.appStates[STATUS]?.value ?? '';
}

/** Removed (and removing) endpoints are never marked alive. */
export function isDeadState(st) {
  return statusOf(st).startsWith('removed');
}

/** The generation a node takes when it starts gossiping now: seconds since the epoch. */
export function generationNumber(rt) {
  return Math.floor(rt.now() / 1000);
}

export function isShutdown(st) {
  return statusOf(st) === 'shutdown';
}

export class Gossiper {
  /**
   * @param {DDBench.NodeRuntime} rt the node runtime
   * @param {{onJoin(ep: string, st: any): void, onChange(ep: string, key: string, value: any): void, onAlive(ep: string): void, onDead(ep: string): void, onRemove(ep: string): void}} subscriber
   */
  constructor(rt, subscriber) {
    this.rt = rt;
    this.self = rt.id;
    this.subscriber = subscriber;
    this.intervalMs = Number(rt.config.gossipIntervalMs ?? 200);
    this.convictMs = Number(rt.config.convictMs ?? 3000);
    this.quarantineDelayMs = Number(rt.config.quarantineDelayMs ?? 2000);
    /** how far ahead (seconds) a peer's generation may be before it is not believed */
    this.maxGenerationDifference = Number(rt.config.maxGenerationDifferenceS ?? 3600);
    this.seeds = /** @type {string[]} */ (rt.config.seeds ?? rt.nodes.slice(0, 2));
    /** @type {Map<string, {generation: number, version: number, appStates: Record<string, {value: any, version: number}>, alive: boolean, updateTimestamp: number}>} */
    this.endpointStateMap = new Map();
    /** @type {Map<string, number>} endpoint → when its state may be evicted */
    this.expireTimeEndpointMap = new Map();
    /** @type {Map<string, number>} evicted endpoint → when it was evicted (quarantine) */
    this.justRemovedEndpoints = new Map();
    this.versionSeq = 0;
    /** the shadow round under way, if any: the contact nodes' answers so far */
    this.shadowRound = null;
    this.enabled = false;
    this.timer = null;
  }

  nextVersion() {
    return ++this.versionSeq;
  }

  /** Starts (or, after stop(), restarts) gossiping under a new generation. */
  start(generation, appStates) {
    const now = this.rt.now();
    const st = { generation, version: this.nextVersion(), appStates: {}, alive: true, updateTimestamp: now };
    for (const [k, v] of Object.entries(appStates)) st.appStates[k] = { value: v, version: this.nextVersion() };
    this.endpointStateMap.set(this.self, st);
    // The failure detector starts afresh: silence while we were not gossiping is not theirs.
    for (const other of this.endpointStateMap.values()) other.updateTimestamp = now;
    this.enabled = true;
    this.timer = this.rt.setTimer(this.intervalMs, () => this.gossipTask());
  }

  isEnabled() {
    return this.enabled;
  }

  addLocalApplicationState(key, value) {
    const st = this.endpointStateMap.get(this.self);
    st.appStates[key] = { value, version: this.nextVersion() };
  }

  getEndpointState(ep) {
    return this.endpointStateMap.get(ep);
  }

  isAlive(ep) {
    if (ep === this.self) return true;
    return this.endpointStateMap.get(ep)?.alive === true;
  }

  liveMembers() {
    return [...this.endpointStateMap.keys()].filter((ep) => ep !== this.self && this.isAlive(ep));
  }

  unreachableMembers() {
    return [...this.endpointStateMap.keys()].filter((ep) => ep !== this.self && !this.isAlive(ep));
  }

  // ---- the gossip round ----

  gossipTask() {
    const me = this.endpointStateMap.get(this.self);
    me.version = this.nextVersion();
    const digests = [...this.endpointStateMap].map(([ep, st]) => ({ ep, generation: st.generation, maxVersion: maxVersion(st) }));
    const live = this.liveMembers();
    const unreachable = this.unreachableMembers();
    let gossipedToSeed = false;
    if (live.length > 0) {
      const to = live[Math.floor(this.rt.random() * live.length)];
      gossipedToSeed = this.seeds.includes(to);
      this.rt.send(to, 'GossipDigestSyn', { digests });
    }
    if (unreachable.length > 0 && this.rt.random() < unreachable.length / (live.length + 1)) {
      this.rt.send(unreachable[Math.floor(this.rt.random() * unreachable.length)], 'GossipDigestSyn', { digests });
    }
    const seeds = this.seeds.filter((s) => s !== this.self);
    if (!gossipedToSeed && seeds.length > 0 && (live.length < seeds.length || this.rt.random() < 0.2)) {
      this.rt.send(seeds[Math.floor(this.rt.random() * seeds.length)], 'GossipDigestSyn', { digests });
    }
    this.doStatusCheck();
    this.timer = this.rt.setTimer(this.intervalMs, () => this.gossipTask());
  }

  doStatusCheck() {
    const now = this.rt.now();
    for (const [ep, st] of [...this.endpointStateMap]) {
      if (ep === this.self) continue;
      if (st.alive && now - st.updateTimestamp > this.convictMs) {
        this.rt.log.info('convicting endpoint', { endpoint: ep, silentMs: now - st.updateTimestamp });
        this.markDead(ep, st);
      }
      const expire = this.expireTimeEndpointMap.get(ep);
      if (!st.alive && expire !== undefined && now > expire) this.evictFromMembership(ep);
    }
    for (const [ep, at] of [...this.justRemovedEndpoints]) {
      if (now - at > this.quarantineDelayMs) this.justRemovedEndpoints.delete(ep);
    }
  }

  // ---- the three messages ----

  onMessage(from, type, body) {
    // The shadow round's verb is answered whether or not this node gossips (yet).
    if (type === 'GossipGetEndpointStates') return this.rt.send(from, 'GossipGetEndpointStatesResp', { states: this.copyOfStates() });
    if (type === 'GossipGetEndpointStatesResp') return this.handleGetEndpointStatesResp(from, body);
    if (!this.enabled) return;
    switch (type) {
      case 'GossipDigestSyn':
        return this.handleSyn(from, body);
      case 'GossipDigestAck':
        return this.handleAck(from, body);
      case 'GossipDigestAck2':
        return this.applyStateLocally(body.states ?? {});
      case 'GossipShutdown':
        return this.handleShutdown(from, body);
    }
  }

  handleSyn(from, { digests }) {
    const requests = [];
    const states = {};
    const mentioned = new Set();
    for (const d of digests) {
      mentioned.add(d.ep);
      const local = this.endpointStateMap.get(d.ep);
      if (!local) {
        requests.push(d.ep);
        continue;
      }
      const localMax = maxVersion(local);
      if (d.generation > local.generation || (d.generation === local.generation && d.maxVersion > localMax)) requests.push(d.ep);
      else if (d.generation < local.generation || localMax > d.maxVersion) states[d.ep] = copyOf(local);
    }
    for (const [ep, st] of this.endpointStateMap) if (!mentioned.has(ep)) states[ep] = copyOf(st);
    this.rt.send(from, 'GossipDigestAck', { requests, states });
  }

  handleAck(from, { requests, states }) {
    this.applyStateLocally(states ?? {});
    const reply = {};
    for (const ep of requests ?? []) {
      const st = this.endpointStateMap.get(ep);
      if (st) reply[ep] = copyOf(st);
    }
    if (Object.keys(reply).length > 0) this.rt.send(from, 'GossipDigestAck2', { states: reply });
  }

  applyStateLocally(epStates) {
    for (const [ep, remote] of Object.entries(epStates)) {
      if (ep === this.self) continue;
      if (this.justRemovedEndpoints.has(ep)) {
        this.rt.log.debug('ignoring gossip for endpoint in quarantine', { endpoint: ep });
        continue;
      }
      const local = this.endpointStateMap.get(ep);
      if (!local || remote.generation > local.generation) {
        // Measured against the generation this node would take if it restarted now, so a long uptime is no drift.
        if (remote.generation > generationNumber(this.rt) + this.maxGenerationDifference) {
          // Some peer has corrupted memory, or a clock far ahead: do not believe it.
          this.rt.log.warn('received an invalid gossip generation for peer', { endpoint: ep, localGeneration: local?.generation ?? null, receivedGeneration: remote.generation });
          continue;
        }
        this.handleMajorStateChange(ep, remote, local);
      } else if (remote.generation === local.generation && maxVersion(remote) > maxVersion(local)) {
        this.applyNewStates(ep, local, remote);
        if (!local.alive && !isDeadState(local)) this.markAlive(ep, local);
      }
    }
  }

  handleMajorStateChange(ep, remote, previous) {
    const st = { ...copyOf(remote), alive: false, updateTimestamp: this.rt.now() };
    if (previous) this.rt.log.info('node has restarted', { endpoint: ep, generation: st.generation, previousGeneration: previous.generation });
    this.endpointStateMap.set(ep, st);
    if (!isDeadState(st)) this.markAlive(ep, st);
    else this.rt.log.debug('not marking endpoint alive due to dead state', { endpoint: ep, status: statusOf(st) });
    this.subscriber.onJoin(ep, st);
  }

  applyNewStates(ep, local, remote) {
    local.version = Math.max(local.version, remote.version);
    local.updateTimestamp = this.rt.now();
    for (const [key, a] of Object.entries(remote.appStates)) {
      const mine = local.appStates[key];
      if (mine && mine.version >= a.version) continue;
      local.appStates[key] = { value: a.value, version: a.version };
      this.subscriber.onChange(ep, key, a.value);
    }
  }

  markAlive(ep, st) {
    if (isShutdown(st)) {
      this.rt.log.debug('not marking shut-down endpoint alive', { endpoint: ep });
      return;
    }
    st.alive = true;
    st.updateTimestamp = this.rt.now();
    this.rt.log.info('endpoint is now UP', { endpoint: ep, generation: st.generation });
    this.subscriber.onAlive(ep);
  }

  markDead(ep, st) {
    const wasAlive = st.alive;
    st.alive = false;
    if (wasAlive) this.rt.log.info('endpoint is now DOWN', { endpoint: ep, generation: st.generation });
    this.subscriber.onDead(ep);
  }

  // ---- shutdown, removal, eviction ----

  /** Announces a clean shutdown to every live endpoint and stops gossiping. */
  stop() {
    if (this.timer) this.timer.cancel();
    this.timer = null;
    this.enabled = false;
    const me = this.endpointStateMap.get(this.self);
    for (const ep of this.liveMembers()) this.rt.send(ep, 'GossipShutdown', { generation: me.generation });
    this.rt.log.info('announced shutdown', { generation: me.generation });
  }

  handleShutdown(from, { generation }) {
    const st = this.endpointStateMap.get(from);
    this.rt.log.info('received shutdown', { endpoint: from, generation });
    if (!st) return;
    if (st.generation > generation) return;
    this.markAsShutdown(from, st);
  }

  /** Marks an endpoint shut down; the highest version keeps the mark until it restarts with a new generation. */
  markAsShutdown(ep, st) {
    st.appStates[STATUS] = { value: 'shutdown', version: MAX_VERSION };
    st.version = MAX_VERSION;
    this.markDead(ep, st);
    this.subscriber.onChange(ep, STATUS, 'shutdown');
  }

  /** removenode: publishes, on behalf of a dead endpoint, that its tokens are removed. */
  advertiseTokenRemoved(ep, expireTime) {
    const st = this.endpointStateMap.get(ep);
    if (!st) return;
    st.updateTimestamp = this.rt.now();
    st.generation += 1;
    st.version = this.nextVersion();
    st.appStates[STATUS] = { value: `removed,${expireTime}`, version: this.nextVersion() };
    this.addExpireTimeForEndpoint(ep, expireTime);
    this.rt.log.info('advertised token removal', { endpoint: ep, expireTime });
  }

  addExpireTimeForEndpoint(ep, expireTime) {
    this.rt.log.debug('adding expire time for endpoint', { endpoint: ep, expireTime });
    this.expireTimeEndpointMap.set(ep, expireTime);
  }

  evictFromMembership(ep) {
    this.endpointStateMap.delete(ep);
    this.expireTimeEndpointMap.delete(ep);
    this.justRemovedEndpoints.set(ep, this.rt.now());
    this.rt.log.info('evicted endpoint from gossip', { endpoint: ep });
    this.subscriber.onRemove(ep);
  }

  // ---- the shadow round (a restart) ----

  copyOfStates() {
    const states = {};
    for (const [ep, st] of this.endpointStateMap) states[ep] = copyOf(st);
    return states;
  }

  /**
   * The shadow round of a restart: before this node gossips, asks `nodes` for the endpoint states they
   * hold, and calls done(states) with the newest state of every endpoint among the answers.
   */
  doShadowRound(nodes, done) {
    const round = { talked: new Map(), answered: () => {} };
    this.shadowRound = round;
    this.rt.log.info('gossip shadow round started', { nodes });
    const finish = () => {
      this.shadowRound = null;
      const states = {};
      for (const answer of round.talked.values()) {
        for (const [ep, st] of Object.entries(answer)) {
          const cur = states[ep];
          if (!cur || st.generation > cur.generation || (st.generation === cur.generation && maxVersion(st) > maxVersion(cur))) states[ep] = st;
        }
      }
      done(states);
    };
    const settle = () => {
      timer.cancel();
      for (const ep of nodes) if (!round.talked.has(ep)) this.rt.log.warn('get endpoint states request timed out', { endpoint: ep });
      if (round.talked.size > 0) {
        this.rt.log.info('gossip shadow round finished', { talked: [...round.talked.keys()].sort() });
        return finish();
      }
      this.rt.log.warn('no contact node answered, skipping the shadow round', { nodes });
      finish();
    };
    round.answered = () => {
      if (nodes.every((ep) => round.talked.has(ep))) settle();
    };
    for (const ep of nodes) this.rt.send(ep, 'GossipGetEndpointStates', {});
    const timer = this.rt.setTimer(SHADOW_REQUEST_TIMEOUT_MS, settle);
  }

  handleGetEndpointStatesResp(from, { states }) {
    const round = this.shadowRound;
    if (!round) return; // an answer that comes after the round is over
    round.talked.set(from, states ?? {});
    round.answered();
  }
}
