package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a throwaway redis-server on a free port that keeps nothing on disk, so a restart
// loses every key: the run's Redis is never the machine's shared one when it is restarted.
type redisServer struct {
	bin, dir string
	port     int
	proc     *child
}

func newRedisServer(ctx context.Context, parent string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis: redis-server not installed (the redis-restart fault needs it): %w", err)
	}
	dir, err := os.MkdirTemp(parent, "redis-")
	if err != nil {
		return nil, fmt.Errorf("redis: temp dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &redisServer{bin: bin, dir: dir, port: port}
	return r, r.start(ctx)
}

func (r *redisServer) url(db int) string {
	return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/" + strconv.Itoa(db)
}

func (r *redisServer) start(ctx context.Context) error {
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	p, err := startChild(cmd, filepath.Join(r.dir, "redis.log"))
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	r.proc = p
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.port), MaxRetries: -1})
	defer client.Close()
	return waitFor(ctx, 15*time.Second, "redis-server answers PING", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return client.Ping(pctx).Err() == nil
	})
}

// restartEmpty kills the server without saving and starts it again with no data.
func (r *redisServer) restartEmpty(ctx context.Context) error {
	r.proc.kill()
	_ = os.Remove(filepath.Join(r.dir, "dump.rdb"))
	return r.start(ctx)
}

func (r *redisServer) remove() {
	if r.proc != nil {
		r.proc.kill()
	}
	_ = os.RemoveAll(r.dir)
}
