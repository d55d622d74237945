package crm

import (
	"context"
	"errors"
	"net/http"
)

// Discover lists contact properties, the lifecyclestage options, deal pipelines and checks the
// loop-breaker properties.
func (h *hubSpot) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	props, err := h.contactProperties(ctx)
	if err != nil {
		return d, err
	}
	have := map[string]bool{}
	for _, p := range props {
		have[p.Name] = true
		d.Fields = append(d.Fields, RemoteField{ID: p.Name, Key: p.Name, Label: p.Label, Type: p.Type})
		if p.Name == hsLifecycle {
			for _, o := range p.Options {
				d.LifecycleOptions = append(d.LifecycleOptions, Option{Value: o.Value, Label: o.Label, Order: o.DisplayOrder})
			}
		}
	}
	if d.Pipelines, err = h.dealPipelines(ctx); err != nil {
		return d, err
	}
	d.Loop = LoopCheck{
		LoopField: h.cfg.LoopField, LoopFieldFound: have[h.cfg.LoopField],
		SyncField: h.cfg.SyncField, SyncFieldFound: have[h.cfg.SyncField],
		CanCreate: true,
	}
	if !d.Loop.LoopFieldFound || !d.Loop.SyncFieldFound {
		d.Loop.Instructions = loopInstructions("HubSpot (Settings > Properties > Contact properties)", h.cfg.LoopField, h.cfg.SyncField)
	}
	return d, nil
}

// CreateLoopFields creates the missing loop-breaker properties as single-line text properties.
func (h *hubSpot) CreateLoopFields(ctx context.Context) error {
	d, err := h.Discover(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for name, found := range map[string]bool{h.cfg.LoopField: d.Loop.LoopFieldFound, h.cfg.SyncField: d.Loop.SyncFieldFound} {
		if found {
			continue
		}
		in := map[string]any{"name": name, "label": name, "type": "string", "fieldType": "text", "groupName": "contactinformation"}
		if _, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/properties/contacts", in: in}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
