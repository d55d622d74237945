package crm

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// hsReadProperties are read for every contact; ReaderConfig.Properties adds the stage property and the
// mapped fields.
var hsReadProperties = []string{"email", "phone", "mobilephone", "firstname", "lastname", "company", "lifecyclestage"}

// hsReader pages /crm/v3/objects/contacts with the properties leadgate maps and, in deal mode, each
// contact's deal in the pipeline.
type hsReader struct {
	api      *apiClient
	props    []string
	pipeline string // deal mode: the pipeline whose deal stage is the contact's stage
}

// hsListed is a contact as the reads return it: hsObject with its creation time.
type hsListed struct {
	hsObject
	CreatedAt time.Time `json:"createdAt"`
}

func (r *hsReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	var out struct {
		Results []hsListed `json:"results"`
		Paging  struct {
			Next struct {
				After string `json:"after"`
			} `json:"next"`
		} `json:"paging"`
	}
	// properties is an array query parameter of style form, explode true (properties=a&properties=b), per
	// GET /crm/v3/objects/contacts in HubSpot's contacts description.
	q := url.Values{"limit": {"100"}, "properties": r.props}
	if cursor != "" {
		q.Set("after", cursor)
	}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/crm/v3/objects/contacts", query: q, out: &out}, nil); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Results))
	for _, o := range out.Results {
		page = append(page, hsRemote(o))
	}
	if err := r.addDeals(ctx, page); err != nil {
		return nil, "", err
	}
	return page, out.Paging.Next.After, nil
}

func (r *hsReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var o hsListed
	q := url.Values{"properties": r.props}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/crm/v3/objects/contacts/" + pathID(id), query: q, out: &o}, nil); err != nil {
		return RemoteContact{}, err
	}
	return hsRemote(o), nil
}

// hsRemote keeps a property HubSpot answers as null, as "": every property asked for is in Values.
func hsRemote(o hsListed) RemoteContact {
	p := make(map[string]string, len(o.Properties))
	for k, v := range o.Properties {
		if v != nil {
			p[k] = *v
		} else {
			p[k] = ""
		}
	}
	return RemoteContact{ID: string(o.ID), Email: p["email"], Phone: cmp.Or(p["phone"], p["mobilephone"]), FirstName: p["firstname"],
		LastName: p["lastname"], Company: p["company"], Values: p, CreatedAt: o.CreatedAt}
}

// addDeals sets, in deal mode, each contact's deal in the pipeline and its dealstage (PrevDealID,
// PrevDealStage): v4 association batch reads for the page's contacts, following each result's own
// paging.next.after (sent back alongside the contact's id, PublicFetchAssociationsBatchRequest in
// PublicApiSpecs/CRM/Associations/Rollouts/130902/v4/associations.json), then deal batch reads (100 a
// call) of their deals (object type 0-3; BatchReadInputSimplePublicObjectId requires properties and
// propertiesWithHistory). A contact with several deals in the pipeline gets its oldest (smallest id), the
// one the adapter moves.
func (r *hsReader) addDeals(ctx context.Context, page []RemoteContact) error {
	if r.pipeline == "" || len(page) == 0 {
		return nil
	}
	dealsOf, ids, err := r.dealAssociations(ctx, page)
	if err != nil {
		return err
	}
	stage := map[string]string{} // deal id -> dealstage, deals of the pipeline only
	for start := 0; start < len(ids); start += hsMaxBatch {
		chunk := ids[start:min(start+hsMaxBatch, len(ids))]
		in := make([]map[string]string, len(chunk))
		for i, id := range chunk {
			in[i] = map[string]string{"id": id}
		}
		var out struct {
			Results []hsObject `json:"results"`
		}
		body := map[string]any{"properties": []string{"dealstage", "pipeline"}, "propertiesWithHistory": []string{}, "inputs": in}
		if _, err := r.api.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/0-3/batch/read", in: body, out: &out}, nil); err != nil {
			return err
		}
		for _, d := range out.Results {
			if p := d.values(); p["pipeline"] == r.pipeline {
				stage[string(d.ID)] = p["dealstage"]
			}
		}
	}
	for i := range page {
		best := ""
		for _, id := range dealsOf[page[i].ID] {
			if _, ok := stage[id]; ok && (best == "" || lessID(id, best)) {
				best = id
			}
		}
		if best == "" {
			continue
		}
		if page[i].Values == nil {
			page[i].Values = map[string]string{}
		}
		page[i].Values[PrevDealID], page[i].Values[PrevDealStage] = best, stage[best]
	}
	return nil
}

// dealAssociations returns each contact's deal ids and every deal id once. Contacts without deals come
// back as per-input errors of a 207 and are simply absent.
func (r *hsReader) dealAssociations(ctx context.Context, page []RemoteContact) (map[string][]string, []string, error) {
	type input struct {
		ID    string `json:"id"`
		After string `json:"after,omitempty"`
	}
	todo := make([]input, len(page))
	for i, c := range page {
		todo[i] = input{ID: c.ID}
	}
	dealsOf := map[string][]string{}
	var ids []string
	seen := map[string]bool{}
	for pages := 0; len(todo) > 0; pages++ {
		if pages > hsMaxAssocPages {
			return nil, nil, &Error{Class: Transient, Message: "hubspot: deal associations: the paging did not end"}
		}
		chunk := todo[:min(hsMaxBatch, len(todo))]
		todo = todo[len(chunk):]
		var assoc struct {
			Results []struct {
				From struct {
					ID json.Number `json:"id"`
				} `json:"from"`
				To []struct {
					ToObjectID json.Number `json:"toObjectId"` // a string in the description; a number is read too
				} `json:"to"`
				Paging *struct {
					Next *struct {
						After string `json:"after"`
					} `json:"next"`
				} `json:"paging"`
			} `json:"results"`
		}
		c := call{method: http.MethodPost, path: "/crm/v4/associations/contacts/deals/batch/read", in: map[string]any{"inputs": chunk}, out: &assoc}
		if _, err := r.api.do(ctx, c, nil); err != nil {
			return nil, nil, err
		}
		for _, a := range assoc.Results {
			from := a.From.ID.String()
			for _, t := range a.To {
				id := t.ToObjectID.String()
				dealsOf[from] = append(dealsOf[from], id)
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			if a.Paging != nil && a.Paging.Next != nil && a.Paging.Next.After != "" {
				todo = append(todo, input{ID: from, After: a.Paging.Next.After})
			}
		}
	}
	return dealsOf, ids, nil
}
