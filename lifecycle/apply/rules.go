package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// loadRules returns the workspace's rules in force, or the defaults (version
// 0) when none were saved.
func loadRules(ctx context.Context, st *models.Store, workspaceID int64) (lifecycle.Rules, error) {
	v, err := st.StageRulesCurrent(ctx, workspaceID)
	if errors.Is(err, models.ErrNotFound) {
		return lifecycle.DefaultRules(), nil
	}
	if err != nil {
		return lifecycle.Rules{}, err
	}
	r, err := lifecycle.ParseRules(v.Rules)
	if err != nil {
		return lifecycle.Rules{}, fmt.Errorf("apply: stored rules v%d of workspace %d: %w", v.Version, workspaceID, err)
	}
	r.Version = v.Version
	return r, nil
}

// LoadRules is loadRules for the API and the dry-run.
func LoadRules(ctx context.Context, st *models.Store, workspaceID int64) (lifecycle.Rules, error) {
	return loadRules(ctx, st, workspaceID)
}

// rulesKey names one saved version of a workspace's rules.
type rulesKey struct {
	workspaceID int64
	version     int
}

// rules is loadRules with the decoded rule set cached per version: saved
// versions never change, so only the version lookup runs every time.
func (a *Applier) rules(ctx context.Context, st *models.Store, workspaceID int64) (lifecycle.Rules, error) {
	v, err := st.StageRulesCurrent(ctx, workspaceID)
	if errors.Is(err, models.ErrNotFound) {
		return lifecycle.DefaultRules(), nil
	}
	if err != nil {
		return lifecycle.Rules{}, err
	}
	key := rulesKey{workspaceID, v.Version}
	if r, ok := a.parsed.Load(key); ok {
		return r.(lifecycle.Rules), nil
	}
	r, err := lifecycle.ParseRules(v.Rules)
	if err != nil {
		return lifecycle.Rules{}, fmt.Errorf("apply: stored rules v%d of workspace %d: %w", v.Version, workspaceID, err)
	}
	r.Version = v.Version
	a.parsed.Store(key, r)
	return r, nil
}
