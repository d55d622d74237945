package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPostgresClusterStopAndStart(t *testing.T) {
	pg := PostgresCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dbURL := pg.URL("postgres")

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the new cluster: %v", err)
	}
	var fsync string
	if err := conn.QueryRow(ctx, `SHOW fsync`).Scan(&fsync); err != nil || fsync != "on" {
		t.Errorf("fsync = %q (%v), want on", fsync, err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE events (id int PRIMARY KEY); INSERT INTO events VALUES (1)`); err != nil {
		t.Fatal(err)
	}

	pg.Stop()
	if err := conn.Ping(ctx); err == nil {
		t.Error("an open connection still works after Stop")
	}
	_ = conn.Close(ctx)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	if c, err := pgx.Connect(short, dbURL); err == nil {
		_ = c.Close(ctx)
		t.Fatal("a new connection succeeded after Stop")
	}

	pg.Start()
	conn, err = pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect after Start: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows after Stop/Start = %d (%v), want 1 kept", n, err)
	}
}
