package crm

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// acReader lists /contacts by offset and reads each contact for its custom field values (AC's list
// does not carry them): one request per contact plus one per 100, and in deal mode one more per contact
// for its deals.
type acReader struct {
	api      *apiClient
	pipeline string // deal mode: the deal group whose deal stage is the contact's stage
}

func (r *acReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	offset, _ := strconv.Atoi(cursor)
	var out struct {
		Contacts []struct {
			ID flexString `json:"id"`
		} `json:"contacts"`
	}
	q := url.Values{"limit": {"100"}, "offset": {strconv.Itoa(offset)}}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &out}, nil); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Contacts))
	for _, c := range out.Contacts {
		rc, err := r.Get(ctx, string(c.ID))
		if err != nil {
			return nil, "", err
		}
		page = append(page, rc)
	}
	next := ""
	if len(out.Contacts) == 100 {
		next = strconv.Itoa(offset + 100)
	}
	return page, next, nil
}

func (r *acReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var out struct {
		Contact struct {
			acContact
			CDate string `json:"cdate"`
		} `json:"contact"`
		FieldValues []struct {
			Field flexString `json:"field"`
			Value string     `json:"value"`
		} `json:"fieldValues"`
	}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(id), out: &out}, nil); err != nil {
		return RemoteContact{}, err
	}
	c := out.Contact
	rc := RemoteContact{ID: string(c.ID), Email: c.Email, Phone: c.Phone, FirstName: c.FirstName, LastName: c.LastName, Values: c.values()}
	rc.CreatedAt, _ = time.Parse(time.RFC3339, c.CDate)
	for _, fv := range out.FieldValues {
		rc.Values[string(fv.Field)] = fv.Value
	}
	if r.pipeline != "" {
		if err := r.addDeal(ctx, &rc); err != nil {
			return RemoteContact{}, err
		}
	}
	return rc, nil
}

// addDeal sets the contact's deal in the pipeline and its stage (PrevDealID, PrevDealStage): the oldest
// deal (lowest id) when it has several, the one the adapter moves.
func (r *acReader) addDeal(ctx context.Context, rc *RemoteContact) error {
	var out struct {
		Deals []struct {
			ID    flexString `json:"id"`
			Group flexString `json:"group"`
			Stage flexString `json:"stage"`
		} `json:"deals"`
	}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(rc.ID) + "/deals", out: &out}, nil); err != nil {
		return err
	}
	best, bestN := "", int64(0)
	for _, d := range out.Deals {
		if string(d.Group) != r.pipeline {
			continue
		}
		n, err := strconv.ParseInt(string(d.ID), 10, 64)
		if err != nil {
			continue
		}
		if best == "" || n < bestN {
			best, bestN = string(d.ID), n
			rc.Values[PrevDealID], rc.Values[PrevDealStage] = string(d.ID), string(d.Stage)
		}
	}
	return nil
}
