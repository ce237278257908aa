// raftkv runs hashicorp/raft as one server of a replicated key-value store. The library
// has no server of its own; this is the smallest one that uses it the way Consul and
// Nomad do: raft-boltdb for the log and stable store, a file snapshot store, the TCP
// transport, voters and non-voters, and writes through Apply on the leader. Reads are
// answered by the leader from its applied state without a round trip to the others
// (Consul's "default" consistency mode), so they rest on the library's leader lease.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb"
)

// applyTimeout bounds how long a write waits to be committed before the client is told
// it is unknown whether it took effect.
const applyTimeout = 5 * time.Second

type command struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// store is the replicated state machine: a map written only through the raft log.
type store struct {
	mu   sync.Mutex
	data map[string]string
}

func (s *store) Apply(l *raft.Log) interface{} {
	var c command
	if err := json.Unmarshal(l.Data, &c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[c.Key] = c.Value
	return nil
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

func (s *store) Snapshot() (raft.FSMSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(s.data)
	return snapshot(b), err
}

func (s *store) Restore(r io.ReadCloser) error {
	defer r.Close()
	data := map[string]string{}
	if err := json.NewDecoder(r).Decode(&data); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = data
	return nil
}

type snapshot []byte

func (b snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(b); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (snapshot) Release() {}

// servers parses "n1=127.0.0.1:7000,n2=..." into the cluster's configuration, with the
// ids in `nonvoters` as non-voting members.
func servers(peers, nonvoters string) (raft.Configuration, error) {
	nv := map[string]bool{}
	for _, id := range strings.Split(nonvoters, ",") {
		if id != "" {
			nv[id] = true
		}
	}
	var c raft.Configuration
	for _, p := range strings.Split(peers, ",") {
		kv := strings.SplitN(p, "=", 2)
		if len(kv) != 2 {
			return c, fmt.Errorf("bad peer %q: want id=host:port", p)
		}
		suffrage := raft.Voter
		if nv[kv[0]] {
			suffrage = raft.Nonvoter
		}
		c.Servers = append(c.Servers, raft.Server{Suffrage: suffrage, ID: raft.ServerID(kv[0]), Address: raft.ServerAddress(kv[1])})
	}
	return c, nil
}

func nonvoter(c raft.Configuration, id raft.ServerID) bool {
	for _, s := range c.Servers {
		if s.ID == id {
			return s.Suffrage == raft.Nonvoter
		}
	}
	return false
}

func reply(w http.ResponseWriter, status int, body interface{}) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// notLeader tells a client which server to ask instead.
func notLeader(w http.ResponseWriter, r *raft.Raft) {
	reply(w, http.StatusConflict, map[string]string{"error": "not the leader", "leader": string(r.Leader())})
}

// decode reads a request's body as a command, answering 400 when it is not one.
func decode(w http.ResponseWriter, req *http.Request) (command, bool) {
	var c command
	if err := json.NewDecoder(req.Body).Decode(&c); err != nil {
		reply(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("bad request body: %v", err)})
		return c, false
	}
	return c, true
}

func main() {
	id := flag.String("id", "", "this server's id")
	raftAddr := flag.String("raft", "", "host:port the raft transport listens on")
	httpAddr := flag.String("http", "", "host:port the client API listens on")
	dataDir := flag.String("data", "", "folder for the log, stable store and snapshots")
	peers := flag.String("peers", "", "every server as id=host:port, comma-separated")
	nonvoters := flag.String("nonvoters", "", "ids of the servers that replicate without voting")
	flag.Parse()

	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Debug, Output: os.Stderr, JSONFormat: true, IncludeLocation: true})
	fail := func(what string, err error) {
		logger.Error(what, "error", err)
		os.Exit(1)
	}
	configuration, err := servers(*peers, *nonvoters)
	if err != nil {
		fail("bad -peers", err)
	}

	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(*id)
	conf.Logger = logger
	// Loopback timings: a lost leader is noticed within a second or two.
	conf.HeartbeatTimeout = 1000 * time.Millisecond
	conf.ElectionTimeout = 1000 * time.Millisecond
	conf.LeaderLeaseTimeout = 500 * time.Millisecond
	conf.CommitTimeout = 50 * time.Millisecond

	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		fail("data folder", err)
	}
	boltStore, err := raftboltdb.NewBoltStore(filepath.Join(*dataDir, "raft.db"))
	if err != nil {
		fail("log store", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(*dataDir, 2, logger)
	if err != nil {
		fail("snapshot store", err)
	}
	advertise, err := net.ResolveTCPAddr("tcp", *raftAddr)
	if err != nil {
		fail("-raft", err)
	}
	transport, err := raft.NewTCPTransportWithLogger(*raftAddr, advertise, 3, 2*time.Second, logger)
	if err != nil {
		fail("transport", err)
	}
	fsm := &store{data: map[string]string{}}

	// The voters bootstrap the same configuration on first start; a non-voter starts
	// empty and learns it from the leader, as one added with AddNonvoter would. A
	// restart finds its state on disk and keeps it.
	existing, err := raft.HasExistingState(boltStore, boltStore, snaps)
	if err != nil {
		fail("reading state", err)
	}
	if !existing && !nonvoter(configuration, conf.LocalID) {
		if err := raft.BootstrapCluster(conf, boltStore, boltStore, snaps, transport, configuration); err != nil {
			fail("bootstrap", err)
		}
	}
	r, err := raft.NewRaft(conf, fsm, boltStore, boltStore, snaps, transport)
	if err != nil {
		fail("starting raft", err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/kv/put", func(w http.ResponseWriter, req *http.Request) {
		c, ok := decode(w, req)
		if !ok {
			return
		}
		if r.State() != raft.Leader {
			notLeader(w, r)
			return
		}
		b, _ := json.Marshal(c)
		f := r.Apply(b, applyTimeout)
		// Apply's timeout covers only enqueueing: the wait for the commit is bounded here.
		done := make(chan error, 1)
		go func() { done <- f.Error() }()
		select {
		case err := <-done:
			if err != nil {
				reply(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
				return
			}
			reply(w, http.StatusOK, map[string]interface{}{"index": f.Index()})
		case <-time.After(applyTimeout):
			reply(w, http.StatusServiceUnavailable, map[string]string{"error": fmt.Sprintf("not committed within %v; it may still be applied", applyTimeout)})
		}
	})
	// A read from this server's applied state: on the leader only (/kv/get), or on any
	// server, a person's or a check's look at what it holds (/kv/local).
	read := func(leaderOnly bool) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			c, ok := decode(w, req)
			if !ok {
				return
			}
			if leaderOnly && r.State() != raft.Leader {
				notLeader(w, r)
				return
			}
			v, found := fsm.get(c.Key)
			reply(w, http.StatusOK, map[string]interface{}{"key": c.Key, "value": v, "found": found, "index": r.AppliedIndex()})
		}
	}
	mux.HandleFunc("/kv/get", read(true))
	mux.HandleFunc("/kv/local", read(false))
	mux.HandleFunc("/status", func(w http.ResponseWriter, req *http.Request) {
		stats := r.Stats()
		stats["id"] = *id
		stats["address"] = string(transport.LocalAddr())
		stats["leader"] = string(r.Leader())
		reply(w, http.StatusOK, stats)
	})
	logger.Named("kv").Info("client API listening", "address", *httpAddr)
	if err := http.ListenAndServe(*httpAddr, mux); err != nil {
		fail("client API", err)
	}
}
