package throwaway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisNode is one redis-server process (a data node or a sentinel) that keeps nothing on disk.
type RedisNode struct {
	Port int
	Dir  string
	bin  string
	args []string

	mu   sync.Mutex
	proc *proc
}

// redisBin finds redis-server.
func redisBin() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("throwaway: redis-server is not installed: %w", err)
	}
	return bin, nil
}

// newRedisNode prepares a data node in dir/name on a free port; extra are more redis-server options.
func newRedisNode(dir, name, bin string, extra ...string) (*RedisNode, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("throwaway: %w", err)
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", d, "--save", "", "--appendonly", "no",
		"--daemonize", "no"}, extra...)
	return &RedisNode{Port: port, Dir: d, bin: bin, args: args}, nil
}

// Addr is the node's host:port.
func (n *RedisNode) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

func (n *RedisNode) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
}

// Start starts the node (again) with its options and waits until it answers PING.
func (n *RedisNode) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc.running() {
		return nil
	}
	p, err := startProc(exec.Command(n.bin, n.args...), filepath.Join(n.Dir, "redis.log"))
	if err != nil {
		return err
	}
	n.proc = p
	c := n.client()
	defer c.Close()
	return waitFor(ctx, 15*time.Second, "redis on "+n.Addr()+" answers PING", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return c.Ping(pctx).Err() == nil
	})
}

// Kill stops the node at once (SIGKILL): its data is gone.
func (n *RedisNode) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.proc.kill()
}

// Running reports whether the node's process is alive.
func (n *RedisNode) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc.running()
}

// info returns one field of INFO section from the node ("" when it does not answer).
func (n *RedisNode) info(ctx context.Context, section, field string) string {
	c := n.client()
	defer c.Close()
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// Sentinel is a Redis Sentinel deployment: Nodes[0] starts as the master, the others as its replicas,
// watched by Sentinels under the master name Name. A master silent for two seconds is failed over.
type Sentinel struct {
	Name      string
	Nodes     []*RedisNode
	Sentinels []*RedisNode
}

// StartSentinel starts a master, replicas replicas and sentinels sentinels (quorum: a majority) in dir,
// and returns once the sentinels know the replicas and each other, so that a failover can happen.
func StartSentinel(ctx context.Context, dir string, replicas, sentinels int) (s *Sentinel, err error) {
	bin, err := redisBin()
	if err != nil {
		return nil, err
	}
	s = &Sentinel{Name: "leadgate"}
	started := s // a failed start returns nil: the servers it started are stopped through this
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	master, err := newRedisNode(dir, "master", bin)
	if err != nil {
		return nil, err
	}
	s.Nodes = append(s.Nodes, master)
	if err := master.Start(ctx); err != nil {
		return nil, err
	}
	for i := range replicas {
		r, err := newRedisNode(dir, fmt.Sprintf("replica%d", i+1), bin, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
		if err != nil {
			return nil, err
		}
		s.Nodes = append(s.Nodes, r)
		if err := r.Start(ctx); err != nil {
			return nil, err
		}
		if err := waitFor(ctx, 20*time.Second, "replica "+r.Addr()+" in sync", func() bool {
			return r.info(ctx, "replication", "master_link_status") == "up"
		}); err != nil {
			return nil, err
		}
	}
	quorum := sentinels/2 + 1
	for i := range sentinels {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		d := filepath.Join(dir, fmt.Sprintf("sentinel%d", i+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("throwaway: %w", err)
		}
		conf := filepath.Join(d, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d %d\nsentinel down-after-milliseconds %[3]s 2000\n"+
			"sentinel failover-timeout %[3]s 10000\nsentinel parallel-syncs %[3]s 1\n", port, d, s.Name, master.Port, quorum)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("throwaway: sentinel config: %w", err)
		}
		n := &RedisNode{Port: port, Dir: d, bin: bin, args: []string{conf, "--sentinel"}}
		s.Sentinels = append(s.Sentinels, n)
		if err := n.Start(ctx); err != nil {
			return nil, err
		}
	}
	for _, sn := range s.Sentinels {
		c := sn.client()
		err := waitFor(ctx, 30*time.Second, "sentinel "+sn.Addr()+" knows the replicas and the other sentinels", func() bool {
			reps, err1 := c.Do(ctx, "SENTINEL", "REPLICAS", s.Name).Slice()
			sents, err2 := c.Do(ctx, "SENTINEL", "SENTINELS", s.Name).Slice()
			return err1 == nil && err2 == nil && len(reps) >= replicas && len(sents) >= sentinels-1
		})
		c.Close()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// URL is LEADGATE_REDIS_URL for DB db through the sentinels.
func (s *Sentinel) URL(db int) string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr()
	}
	return fmt.Sprintf("redis-sentinel://%s/%d?master=%s", strings.Join(addrs, ","), db, s.Name)
}

// MasterAddr is the master's address as the first answering sentinel names it.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var last error
	for _, sn := range s.Sentinels {
		if !sn.Running() {
			continue
		}
		c := sn.client()
		a, err := c.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.Name).StringSlice()
		c.Close()
		if err == nil && len(a) == 2 {
			return a[0] + ":" + a[1], nil
		}
		last = err
	}
	return "", fmt.Errorf("throwaway: no sentinel names the master: %v", last)
}

// Master is the node the sentinels name as master.
func (s *Sentinel) Master(ctx context.Context) (*RedisNode, error) {
	addr, err := s.MasterAddr(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range s.Nodes {
		if n.Addr() == addr {
			return n, nil
		}
	}
	return nil, fmt.Errorf("throwaway: the sentinels name %s, which is none of the set's nodes", addr)
}

// Failover kills the master (SIGKILL, losing whatever it had not replicated) and returns once every
// sentinel names a promoted replica that says it is master, with the old and the new master.
func (s *Sentinel) Failover(ctx context.Context) (old, promoted *RedisNode, err error) {
	if old, err = s.Master(ctx); err != nil {
		return nil, nil, err
	}
	old.Kill()
	err = waitFor(ctx, 60*time.Second, "a replica promoted in place of "+old.Addr(), func() bool {
		for _, sn := range s.Sentinels {
			c := sn.client()
			a, err := c.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.Name).StringSlice()
			c.Close()
			if err != nil || len(a) != 2 || a[0]+":"+a[1] == old.Addr() {
				return false
			}
		}
		m, err := s.Master(ctx)
		if err != nil || m == old {
			return false
		}
		promoted = m
		return m.info(ctx, "replication", "role") == "master"
	})
	return old, promoted, err
}

// Rejoin starts a killed node again; the sentinels turn it into a replica of the current master. It
// returns once the set is whole again: n replicates the master, or, when the sentinels failed over
// once more meanwhile (a master too slow to answer on a loaded machine counts as down), n is the
// master they name and another node replicates it.
func (s *Sentinel) Rejoin(ctx context.Context, n *RedisNode) error {
	if err := n.Start(ctx); err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, n.Addr()+" back in the set", func() bool {
		switch n.info(ctx, "replication", "role") {
		case "slave":
			return n.info(ctx, "replication", "master_link_status") == "up"
		case "master":
			if m, err := s.Master(ctx); err != nil || m != n {
				return false
			}
			for _, o := range s.Nodes {
				if o != n && o.Running() && o.info(ctx, "replication", "master_link_status") == "up" {
					return true
				}
			}
		}
		return false
	})
}

// Close kills every process of the set.
func (s *Sentinel) Close() {
	for _, n := range append(append([]*RedisNode(nil), s.Sentinels...), s.Nodes...) {
		n.Kill()
	}
}

// Cluster is a Redis Cluster of masters without replicas: every slot is served, so a key's slot
// decides which node holds it and a multi-key command across slots is refused, as in production.
type Cluster struct {
	Nodes []*RedisNode
}

// StartCluster starts masters cluster-enabled nodes in dir, joins them with redis-cli --cluster create
// and returns once every node reports cluster_state:ok.
func StartCluster(ctx context.Context, dir string, masters int) (c *Cluster, err error) {
	if masters < 3 {
		return nil, errors.New("throwaway: a Redis Cluster needs at least 3 masters")
	}
	bin, err := redisBin()
	if err != nil {
		return nil, err
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("throwaway: redis-cli is not installed: %w", err)
	}
	c = &Cluster{}
	started := c // a failed start returns nil: the nodes it started are stopped through this
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	create := []string{"--cluster", "create"}
	for i := range masters {
		// The cluster bus listens on its own free port: by default it is the node's port + 10000, which
		// for an ephemeral port above 55535 does not exist, and the node refuses to start.
		bus, err := freePort()
		if err != nil {
			return nil, err
		}
		var n *RedisNode
		for n == nil || n.Port == bus { // a port just freed may be handed out again
			if n, err = newRedisNode(dir, fmt.Sprintf("node%d", i+1), bin, "--cluster-enabled", "yes",
				"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000", "--cluster-port", strconv.Itoa(bus)); err != nil {
				return nil, err
			}
		}
		c.Nodes = append(c.Nodes, n)
		if err := n.Start(ctx); err != nil {
			return nil, err
		}
		create = append(create, n.Addr())
	}
	create = append(create, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, create...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("throwaway: redis-cli --cluster create: %w\n%s", err, out)
	}
	for _, n := range c.Nodes {
		if err := waitFor(ctx, 30*time.Second, "cluster node "+n.Addr()+" ok", func() bool {
			return n.info(ctx, "cluster", "cluster_enabled") == "1" && clusterOK(ctx, n, masters)
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// clusterOK reports whether n sees the whole cluster serving every slot.
func clusterOK(ctx context.Context, n *RedisNode, nodes int) bool {
	cl := n.client()
	defer cl.Close()
	s, err := cl.ClusterInfo(ctx).Result()
	return err == nil && strings.Contains(s, "cluster_state:ok") && strings.Contains(s, "cluster_slots_ok:16384") &&
		strings.Contains(s, "cluster_known_nodes:"+strconv.Itoa(nodes))
}

// URL is LEADGATE_REDIS_URL for the cluster (every node as a seed).
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return "redis-cluster://" + strings.Join(addrs, ",")
}

// Close kills every node.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}
