package models_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// A Store hashes the passwords it sets at its own bcrypt cost, and checks any stored hash at the cost
// that hash carries: passwords set before a change of cost keep signing in.
func TestPasswordsAreHashedAtTheStoresCostAndCheckedAtTheirOwn(t *testing.T) {
	ctx := context.Background()
	dsn := testkit.MigratedDatabase(t)
	open := func(opts ...models.Option) *models.Store {
		st, err := models.Open(ctx, dsn, slog.New(slog.DiscardHandler), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	cheap, standard := open(models.WithPasswordCost(bcrypt.MinCost)), open()
	costOf := func(u models.User) int {
		t.Helper()
		c, err := bcrypt.Cost([]byte(u.PasswordHash))
		if err != nil {
			t.Fatalf("stored hash %q: %v", u.PasswordHash, err)
		}
		return c
	}

	u, err := cheap.UserCreate(ctx, "ada@example.com", "first password 123", "admin", false)
	if err != nil {
		t.Fatal(err)
	}
	if c := costOf(u); c != bcrypt.MinCost {
		t.Errorf("created at cost %d, want the store's %d", c, bcrypt.MinCost)
	}
	if _, err := standard.UserAuthenticate(ctx, "ada@example.com", "first password 123"); err != nil {
		t.Errorf("a store of another cost refused the password: %v", err)
	}

	if err := standard.UserSetPassword(ctx, u.ID, "second password 456"); err != nil {
		t.Fatal(err)
	}
	if u, err = cheap.UserByID(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if c := costOf(u); c != bcrypt.DefaultCost {
		t.Errorf("set at cost %d by the default store, want %d", c, bcrypt.DefaultCost)
	}
	if !u.PasswordIs("second password 456") || u.PasswordIs("first password 123") {
		t.Error("PasswordIs does not tell the new password from the old one")
	}

	// A transaction's store hashes at the cost of the store it came from.
	err = cheap.Tx(ctx, func(tx *models.Store) error { return tx.UserSetPassword(ctx, u.ID, "third password 789") })
	if err != nil {
		t.Fatal(err)
	}
	if u, err = cheap.UserByID(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if c := costOf(u); c != bcrypt.MinCost {
		t.Errorf("set at cost %d in a transaction, want the store's %d", c, bcrypt.MinCost)
	}

	for _, tc := range []struct{ email, password string }{
		{"ada@example.com", "second password 456"},
		{"nobody@example.com", "third password 789"},
	} {
		if _, err := cheap.UserAuthenticate(ctx, tc.email, tc.password); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("sign-in as %s with %q: %v, want ErrNotFound", tc.email, tc.password, err)
		}
	}
	if _, err := cheap.UserAuthenticate(ctx, "ada@example.com", "third password 789"); err != nil {
		t.Errorf("the current password was refused: %v", err)
	}
}
