package crm

import (
	"context"
	"net/http"
	"strings"
)

// hsDefaultLifecycleOrder is HubSpot's default lifecyclestage order, used when the property's options
// cannot be read. Accounts may add and remove stages, so the options are read when first needed.
var hsDefaultLifecycleOrder = map[string]int{
	"subscriber": 0, "lead": 1, "marketingqualifiedlead": 2, "salesqualifiedlead": 3,
	"opportunity": 4, "customer": 5, "evangelist": 6, "other": 7,
}

type hsObject struct {
	ID         flexString         `json:"id"`
	Properties map[string]*string `json:"properties"`
	New        bool               `json:"new"`
	TraceID    string             `json:"objectWriteTraceId"`
}

func (o hsObject) values() map[string]string {
	m := make(map[string]string, len(o.Properties))
	for k, v := range o.Properties {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

// hsBatchOut is the answer of the batch endpoints: 200, or 207 with per-input errors.
type hsBatchOut struct {
	Status  string       `json:"status"`
	Results []hsObject   `json:"results"`
	Errors  []hsBatchErr `json:"errors"`
}

type hsInput struct {
	ID         string            `json:"id,omitempty"`
	IDProperty string            `json:"idProperty,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	TraceID    string            `json:"objectWriteTraceId,omitempty"`
}

// read loads the current properties of every contact: by remote id, by email (batch reads) and by phone
// (searches of the forms a phone may be stored in). A failure of the destination is returned; per-contact
// ones are recorded on the item.
func (h *hubSpot) read(ctx context.Context, items []*hsItem) error {
	props := h.properties(items)
	var byID, byEmail, byPhone []*hsItem
	for _, it := range live(items) {
		switch {
		case it.id != "":
			byID = append(byID, it)
		case it.c.Email != "":
			byEmail = append(byEmail, it)
		default:
			byPhone = append(byPhone, it)
		}
	}
	if len(byPhone) > 0 {
		if err := h.searchPhones(ctx, byPhone, props); err != nil {
			if destinationFault(err) {
				return err
			}
			for _, it := range byPhone {
				it.fail(err)
			}
		}
	}
	if len(byID) > 0 {
		found, err := h.batchRead(ctx, byID, "", props, func(it *hsItem) string { return it.id })
		if err != nil {
			return err
		}
		for _, it := range byID {
			if o, ok := found[it.id]; ok {
				it.remote = o.values()
			} else {
				it.fail(&Error{Class: NotFound, Status: http.StatusNotFound, Message: "hubspot: contact " + it.id + " not found"})
			}
		}
	}
	if len(byEmail) > 0 {
		found, err := h.batchRead(ctx, byEmail, "email", props, func(it *hsItem) string { return it.c.Email })
		if err != nil {
			return err
		}
		var byPhoneToo []*hsItem
		for _, it := range byEmail {
			if o, ok := found[it.c.Email]; ok {
				it.id, it.remote = string(o.ID), o.values()
			} else if it.c.Phone != "" {
				byPhoneToo = append(byPhoneToo, it)
			}
		}
		if err := h.phoneFallback(ctx, byPhoneToo, props); err != nil {
			if destinationFault(err) {
				return err
			}
			for _, it := range byPhoneToo {
				it.fail(err) // not written unlooked-up: a second record of the same person could follow
			}
		}
	}
	return nil
}

// batchRead reads items by key (remote id, or the idProperty value) and indexes the results by that key
// (BatchReadInputSimplePublicObjectId: inputs, properties and propertiesWithHistory are required). Inputs
// that do not exist come back as 207 errors and are simply absent from the index.
func (h *hubSpot) batchRead(ctx context.Context, items []*hsItem, idProperty string, props []string, key func(*hsItem) string) (map[string]hsObject, error) {
	in := map[string]any{"properties": props, "propertiesWithHistory": []string{}, "inputs": inputsOf(items, key)}
	if idProperty != "" {
		in["idProperty"] = idProperty
	}
	var out hsBatchOut
	calls := 0
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/contacts/batch/read", in: in, out: &out}, &calls)
	addCalls(items, calls)
	if err != nil {
		return nil, err
	}
	found := map[string]hsObject{}
	for _, o := range out.Results {
		if idProperty == "" {
			found[string(o.ID)] = o
		} else if v := o.Properties[idProperty]; v != nil {
			found[strings.ToLower(strings.TrimSpace(*v))] = o
		}
	}
	return found, nil
}

func inputsOf(items []*hsItem, key func(*hsItem) string) []hsInput {
	in := make([]hsInput, len(items))
	for i, it := range items {
		in[i] = hsInput{ID: key(it)}
	}
	return in
}

// isBackward reports whether moving lifecyclestage from cur to target goes backwards in the account's
// stage order. Unknown values are never treated as backward.
func (h *hubSpot) isBackward(ctx context.Context, target, cur string) bool {
	order := h.lifecycle(ctx)
	t, ok1 := order[target]
	c, ok2 := order[cur]
	return ok1 && ok2 && t < c
}

// lifecycle returns the lifecyclestage option order, read once from the property definition.
func (h *hubSpot) lifecycle(ctx context.Context) map[string]int {
	h.mu.Lock()
	order := h.lifecycleOrder
	h.mu.Unlock()
	if order != nil {
		return order
	}
	opts, err := h.lifecycleOptions(ctx)
	if err != nil || len(opts) == 0 {
		return hsDefaultLifecycleOrder // not cached: try again next time
	}
	order = map[string]int{}
	for _, o := range opts {
		order[o.Value] = o.Order
	}
	h.mu.Lock()
	h.lifecycleOrder = order
	h.mu.Unlock()
	return order
}

type hsProperty struct {
	Name      string `json:"name"`
	Label     string `json:"label"`
	Type      string `json:"type"`
	FieldType string `json:"fieldType"`
	Options   []struct {
		Value        string `json:"value"`
		Label        string `json:"label"`
		DisplayOrder int    `json:"displayOrder"`
	} `json:"options"`
}

func (h *hubSpot) lifecycleOptions(ctx context.Context) ([]Option, error) {
	var p hsProperty
	if _, err := h.do(ctx, call{method: http.MethodGet, path: "/crm/v3/properties/contacts/" + hsLifecycle, out: &p}, nil); err != nil {
		return nil, err
	}
	opts := make([]Option, len(p.Options))
	for i, o := range p.Options {
		opts[i] = Option{Value: o.Value, Label: o.Label, Order: o.DisplayOrder}
	}
	return opts, nil
}
