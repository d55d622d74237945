package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/models"
)

// FilterSet is a source's rule set as the API answers it and the audit records it.
type FilterSet struct {
	SourceID  int64         `json:"source_id"`
	Rules     []filter.Rule `json:"rules"`
	Version   int           `json:"version"`
	UpdatedBy string        `json:"updated_by,omitempty"`
	UpdatedAt *time.Time    `json:"updated_at,omitempty"`
}

// FilterSetOf is f's view, its rules parsed (never nil).
func FilterSetOf(f models.SourceFilter) FilterSet {
	rules, _ := filter.ParseRules(f.Rules)
	if rules == nil {
		rules = []filter.Rule{}
	}
	at := f.UpdatedAt
	return FilterSet{SourceID: f.SourceID, Rules: rules, Version: f.Version, UpdatedBy: f.UpdatedBy, UpdatedAt: &at}
}

// compileFilterRules compiles a rule set, refusing it with the rule at fault ("rules[1].expr") and the
// compiler's message.
func compileFilterRules(rules []filter.Rule) (*filter.Set, error) {
	set, err := filter.Compile(rules)
	if err != nil {
		var re *filter.RuleError
		if errors.As(err, &re) {
			return nil, Invalid(re.Field, re.Message)
		}
		return nil, Invalid("rules", err.Error())
	}
	return set, nil
}

// PutSourceFilters replaces the rule set of src, a live source its caller loaded from the workspace
// (the surfaces answer a missing one before reading the rules), after compiling every rule.
func (g *Guards) PutSourceFilters(ctx context.Context, actor string, src models.Source, rules []filter.Rule) (FilterSet, error) {
	set, err := compileFilterRules(rules)
	if err != nil {
		return FilterSet{}, err
	}
	rules = set.Rules()
	if rules == nil {
		rules = []filter.Rule{}
	}
	raw, err := json.Marshal(rules)
	if err != nil {
		return FilterSet{}, fmt.Errorf("encode filter rules of source %d: %w", src.ID, err)
	}
	var saved models.SourceFilter
	err = g.Store.Tx(ctx, func(tx *models.Store) error {
		var before any
		if cur, err := tx.SourceFilterGet(ctx, src.WorkspaceID, src.ID); err == nil {
			before = FilterSetOf(cur)
		} else if !errors.Is(err, models.ErrNotFound) {
			return err
		}
		if saved, err = tx.SourceFilterSave(ctx, src.WorkspaceID, src.ID, raw, actor); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: src.WorkspaceID, Actor: actor, Action: "source_filters.update",
			SubjectType: "source", SubjectID: strconv.FormatInt(src.ID, 10), Before: before, After: FilterSetOf(saved)})
	})
	if err != nil {
		return FilterSet{}, fmt.Errorf("save filter rules of source %d: %w", src.ID, err)
	}
	g.ForgetFilters(src.ID)
	return FilterSetOf(saved), nil
}

// ForgetFilters drops a source's cached rule set, so the next event is judged by the saved one.
func (g *Guards) ForgetFilters(sourceID int64) {
	if g.Filters != nil {
		g.Filters.Forget(sourceID)
	}
}
