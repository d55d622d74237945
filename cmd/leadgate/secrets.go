package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leadgate/leadgate/internal/secretbox"
)

// cmdSecrets implements `leadgate secrets rotate`: every stored secret is
// re-encrypted under the new LEADGATE_SECRET_KEY; the old key comes from
// LEADGATE_OLD_SECRET_KEY (or LEADGATE_OLD_SECRET_KEY_FILE).
func cmdSecrets(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) != 1 || args[0] != "rotate" {
		return errors.New("secrets: use `leadgate secrets rotate` with LEADGATE_OLD_SECRET_KEY (old) and LEADGATE_SECRET_KEY (new)")
	}
	oldKey := getenv("LEADGATE_OLD_SECRET_KEY")
	if f := getenv("LEADGATE_OLD_SECRET_KEY_FILE"); oldKey == "" && f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("secrets rotate: LEADGATE_OLD_SECRET_KEY_FILE: %w", err)
		}
		oldKey = strings.TrimSpace(string(b))
	}
	if oldKey == "" {
		return errors.New("secrets rotate: set LEADGATE_OLD_SECRET_KEY to the key the secrets are encrypted with now")
	}
	store, cfg, _, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	if cfg.DevSecret {
		return errors.New("secrets rotate: set LEADGATE_SECRET_KEY to the new key (refusing to rotate onto the development key)")
	}
	oldBox, err := secretbox.New(oldKey)
	if err != nil {
		return err
	}
	newBox, err := secretbox.New(cfg.SecretKey)
	if err != nil {
		return err
	}
	n, err := store.SecretsReseal(ctx, func(sealed []byte) ([]byte, error) {
		plain, err := oldBox.Open(sealed)
		if err != nil {
			return nil, err
		}
		return newBox.Seal(plain)
	})
	if err != nil {
		return fmt.Errorf("secrets rotate: nothing changed: %w", err)
	}
	fmt.Fprintf(stdout, "re-encrypted %d secrets under the new key; restart every leadgate process with it\n", n)
	return nil
}
