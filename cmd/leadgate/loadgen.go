package main

import (
	"context"
	"errors"
	"io"
)

func cmdLoadgen(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return errors.New("loadgen: not built yet")
}
