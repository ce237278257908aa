// state.js — after memberlist's state.go: the member map with incarnation
// numbers, the probe cycle (ping, then indirect pings through k members, then
// suspicion), suspicion timeouts, refutation, and the alive/suspect/dead
// handlers every broadcast and push/pull merge goes through.

export const StateAlive = 'alive';
export const StateSuspect = 'suspect';
export const StateDead = 'dead';
export const StateLeft = 'left';

export const stateMethods = {
  // ---- probing ----

  /** One probe: the next member in round-robin order that is not dead or left. */
  probe() {
    let checked = 0;
    for (;;) {
      if (checked >= this.nodes.length) return;
      if (this.probeIndex >= this.nodes.length) {
        this.resetNodes();
        this.probeIndex = 0;
        checked++;
        continue;
      }
      const node = this.nodes[this.probeIndex++];
      if (node.name === this.name || (node.state !== StateAlive && node.state !== StateSuspect)) {
        checked++;
        continue;
      }
      this.probeNode(node);
      return;
    }
  },

  probeNode(node) {
    const seqNo = this.nextSeqNo();
    let acked = false;
    this.ackHandlers.set(seqNo, () => {
      acked = true;
    });
    this.rt.send(node.name, 'ping', { seqNo, node: node.name, addr: node.addr });
    this.rt.setTimer(this.config.probeTimeoutMs, () => {
      if (acked) return this.ackHandlers.delete(seqNo);
      // Ask k other members to ping it for us.
      const peers = this.kRandomNodes(this.config.indirectChecks, (n) => n.name === node.name || n.state !== StateAlive);
      for (const p of peers) this.rt.send(p.name, 'indirectPing', { seqNo, target: node.name, addr: node.addr });
      this.rt.setTimer(this.config.probeIntervalMs - this.config.probeTimeoutMs, () => {
        this.ackHandlers.delete(seqNo);
        if (acked) return;
        this.rt.log.info('suspect has failed, no acks received', { node: node.name });
        this.suspectNode({ node: node.name, incarnation: node.incarnation, from: this.name });
      });
    });
  },

  /** Drops members that have been dead past gossipToTheDeadMs from the member list. */
  resetNodes() {
    const now = this.rt.now();
    const keep = [];
    for (const n of this.nodes) {
      if ((n.state === StateDead || n.state === StateLeft) && now - n.stateChange > this.config.gossipToTheDeadMs) {
        this.nodeMap.delete(n.name);
        this.rt.log.info('reaped member', { node: n.name, state: n.state });
      } else {
        keep.push(n);
      }
    }
    this.nodes = keep;
  },

  /** Up to k random members not excluded by the filter. */
  kRandomNodes(k, exclude) {
    const pool = this.nodes.filter((n) => n.name !== this.name && !exclude(n));
    const out = [];
    while (out.length < k && pool.length > 0) out.push(pool.splice(Math.floor(this.rt.random() * pool.length), 1)[0]);
    return out;
  },

  // ---- the three state messages ----

  aliveNode(a, bootstrap = false) {
    let state = this.nodeMap.get(a.node);
    if (this.leaving && a.node === this.name) return;
    let updatesNode = false;
    if (!state) {
      state = { name: a.node, addr: a.addr, incarnation: 0, state: StateDead, stateChange: this.rt.now() };
      this.nodeMap.set(a.node, state);
      // Insert at a random position, so probe order differs from node to node.
      this.nodes.splice(Math.floor(this.rt.random() * (this.nodes.length + 1)), 0, state);
      this.rt.log.info('member joined', { node: a.node, addr: a.addr, incarnation: a.incarnation });
    } else {
      if (a.addr !== state.addr) {
        // Another address claims a known name: let it take the name over only from a
        // member that is gone, else two processes would share one name.
        const canReclaim = this.config.deadNodeReclaimMs > 0 && this.rt.now() - state.stateChange > this.config.deadNodeReclaimMs;
        if (state.state === StateLeft || (state.state === StateDead && canReclaim)) {
          this.rt.log.info('updating address of a replaced member', { node: a.node, from: state.addr, to: a.addr, state: state.state });
          updatesNode = true;
        } else {
          this.rt.log.warn('conflicting address', { node: a.node, mine: state.addr, theirs: a.addr, state: state.state });
          return;
        }
      }
      if (!updatesNode && a.incarnation <= state.incarnation && a.node !== this.name) {
        if (state.state !== StateAlive) this.reassertAccusation(state);
        return;
      }
    }
    if (a.node === this.name) {
      if (bootstrap) {
        state.incarnation = a.incarnation;
        state.state = StateAlive;
        state.stateChange = this.rt.now();
        this.broadcast(a.node, { type: 'alive', node: a.node, addr: a.addr, incarnation: a.incarnation });
      } else if (a.incarnation > state.incarnation || (a.incarnation === state.incarnation && state.state !== StateAlive)) {
        this.refute(state, a.incarnation);
      }
      return;
    }
    const wasAlive = state.state === StateAlive;
    state.addr = a.addr;
    state.incarnation = a.incarnation;
    if (state.state !== StateAlive) {
      state.state = StateAlive;
      state.stateChange = this.rt.now();
    }
    this.cancelSuspicion(a.node);
    this.broadcast(a.node, { type: 'alive', node: a.node, addr: a.addr, incarnation: a.incarnation });
    if (!wasAlive) this.rt.log.info('member is alive', { node: a.node, addr: a.addr, incarnation: a.incarnation });
  },

  /** A stale alive message about a member we hold suspect or dead: tell the cluster (and it) again. */
  reassertAccusation(state) {
    const type = state.state === StateSuspect ? 'suspect' : 'dead';
    const from = state.state === StateLeft ? state.name : this.name;
    this.broadcast(state.name, { type, node: state.name, incarnation: state.incarnation, from });
  },

  suspectNode(s) {
    const state = this.nodeMap.get(s.node);
    if (!state) return;
    if (s.incarnation < state.incarnation) return;
    if (state.state !== StateAlive) return;
    if (s.node === this.name) {
      this.refute(state, s.incarnation);
      this.rt.log.warn('refuting a suspect message', { from: s.from, incarnation: state.incarnation });
      return;
    }
    state.incarnation = s.incarnation;
    state.state = StateSuspect;
    state.stateChange = this.rt.now();
    this.broadcast(s.node, { type: 'suspect', node: s.node, incarnation: s.incarnation, from: s.from });
    this.rt.log.info('marked member as suspect', { node: s.node, incarnation: s.incarnation, from: s.from });
    const incarnation = s.incarnation;
    this.cancelSuspicion(s.node);
    this.suspicions.set(
      s.node,
      this.rt.setTimer(this.config.suspicionTimeoutMs, () => {
        this.suspicions.delete(s.node);
        const cur = this.nodeMap.get(s.node);
        if (cur && cur.state === StateSuspect && cur.incarnation === incarnation) {
          this.rt.log.info('marking member as failed, suspect timeout reached', { node: s.node });
          this.deadNode({ node: s.node, incarnation, from: this.name });
        }
      }),
    );
  },

  cancelSuspicion(node) {
    const timer = this.suspicions.get(node);
    if (timer) timer.cancel();
    this.suspicions.delete(node);
  },

  deadNode(d) {
    const state = this.nodeMap.get(d.node);
    if (!state) return;
    if (d.incarnation < state.incarnation) return;
    if (state.state !== StateAlive && state.state !== StateSuspect) return;
    if (d.node === this.name) {
      if (!this.leaving) {
        this.refute(state, d.incarnation);
        this.rt.log.warn('refuting a dead message', { from: d.from, incarnation: state.incarnation });
        return;
      }
    }
    this.cancelSuspicion(d.node);
    state.incarnation = d.incarnation;
    state.state = d.from === d.node ? StateLeft : StateDead;
    state.stateChange = this.rt.now();
    this.broadcast(d.node, { type: 'dead', node: d.node, incarnation: d.incarnation, from: d.from });
    this.rt.log.info(state.state === StateLeft ? 'member left' : 'member failed', { node: d.node, incarnation: d.incarnation, from: d.from });
  },

  /** Beats an accusation about ourselves with a higher incarnation. */
  refute(me, accusedInc) {
    me.incarnation = Math.max(me.incarnation + 1, accusedInc + 1);
    me.state = StateAlive;
    this.broadcast(this.name, { type: 'alive', node: this.name, addr: me.addr, incarnation: me.incarnation });
  },

  /** Push/pull: merges a remote member list. Remote dead members are only suspected here. */
  mergeRemoteState(remote) {
    for (const r of remote) {
      if (r.state === StateAlive) this.aliveNode({ node: r.name, addr: r.addr, incarnation: r.incarnation });
      else if (r.state === StateLeft) this.deadNode({ node: r.name, incarnation: r.incarnation, from: r.name });
      else this.suspectNode({ node: r.name, incarnation: r.incarnation, from: this.name });
    }
  },
};
