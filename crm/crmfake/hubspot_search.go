package crmfake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// POST /crm/v3/objects/contacts/search, PublicObjectSearchRequest (PublicApiSpecs/CRM/Contacts/Rollouts/
// 424/v3/contacts.json): after, filterGroups, limit, properties and sorts are required; limit is at most
// 200; Filter needs operator (the schema's enum) and propertyName. The description allows "up to 6"
// filter groups while HubSpot's changelog (expanded filtering, 2024) gives 5 groups of at most 10 filters,
// 25 filters in all: the fake holds the stricter 5. EQ on a string property compares the stored string
// (a phone typed "(415) 555-0134" is not EQ "+14155550134"); email compares without letter case.
type hsSearchIn struct {
	After        *string `json:"after"`
	FilterGroups *[]struct {
		Filters *[]hsFilter `json:"filters"`
	} `json:"filterGroups"`
	Limit      *int      `json:"limit"`
	Properties *[]string `json:"properties"`
	Sorts      *[]string `json:"sorts"`
	Query      string    `json:"query"`
}

type hsFilter struct {
	PropertyName *string  `json:"propertyName"`
	Operator     *string  `json:"operator"`
	Value        *string  `json:"value"`
	HighValue    *string  `json:"highValue"`
	Values       []string `json:"values"`
}

const (
	hsSearchMaxGroups         = 5
	hsSearchMaxGroupFilters   = 10
	hsSearchMaxFilters        = 25
	hsSearchMaxLimit          = 200
	hsSearchMaxTotal          = 10_000
	hsSearchOperatorsDeclared = "BETWEEN CONTAINS_TOKEN EQ GT GTE HAS_PROPERTY IN LT LTE NEQ NOT_CONTAINS_TOKEN NOT_HAS_PROPERTY NOT_IN"
)

// checkSearch returns why a search request is refused, "" when it is valid.
func (f *HubSpot) checkSearch(in hsSearchIn) string {
	if m := missing("after", in.After == nil, "filterGroups", in.FilterGroups == nil, "limit", in.Limit == nil,
		"properties", in.Properties == nil, "sorts", in.Sorts == nil); len(m) > 0 {
		return "Invalid input JSON: Cannot build PublicObjectSearchRequest, some of required attributes are not set [" + strings.Join(m, ", ") + "]"
	}
	if *in.Limit < 0 || *in.Limit > hsSearchMaxLimit {
		return fmt.Sprintf("limit must be between 0 and %d", hsSearchMaxLimit)
	}
	if *in.After != "" {
		if n, err := strconv.Atoi(*in.After); err != nil || n < 0 {
			return "after is not a valid paging cursor"
		}
	}
	groups := *in.FilterGroups
	if len(groups) > hsSearchMaxGroups {
		return fmt.Sprintf("Too many filter groups: %d, at most %d are allowed", len(groups), hsSearchMaxGroups)
	}
	total := 0
	for _, g := range groups {
		if g.Filters == nil {
			return "Invalid input JSON: Cannot build FilterGroup, some of required attributes are not set [filters]"
		}
		if len(*g.Filters) > hsSearchMaxGroupFilters {
			return fmt.Sprintf("Too many filters in a group: %d, at most %d are allowed", len(*g.Filters), hsSearchMaxGroupFilters)
		}
		total += len(*g.Filters)
		for _, fl := range *g.Filters {
			if msg := f.checkFilter(fl); msg != "" {
				return msg
			}
		}
	}
	if total > hsSearchMaxFilters {
		return fmt.Sprintf("Too many filters: %d, at most %d are allowed", total, hsSearchMaxFilters)
	}
	return ""
}

func (f *HubSpot) checkFilter(fl hsFilter) string {
	if fl.PropertyName == nil || fl.Operator == nil {
		return "Invalid input JSON: Cannot build Filter, some of required attributes are not set [operator, propertyName]"
	}
	if !slices.Contains(strings.Fields(hsSearchOperatorsDeclared), *fl.Operator) {
		return "Invalid input JSON: operator " + *fl.Operator + " is not one of " + hsSearchOperatorsDeclared
	}
	if !f.props[*fl.PropertyName] {
		return "There was a problem with the request: property " + *fl.PropertyName + " does not exist"
	}
	switch *fl.Operator {
	case "IN", "NOT_IN":
		if len(fl.Values) == 0 {
			return "filter on " + *fl.PropertyName + ": operator " + *fl.Operator + " needs values"
		}
	case "HAS_PROPERTY", "NOT_HAS_PROPERTY":
	case "EQ", "NEQ":
		if fl.Value == nil {
			return "filter on " + *fl.PropertyName + ": operator " + *fl.Operator + " needs a value"
		}
	default:
		return "the fake implements EQ, NEQ, IN, NOT_IN, HAS_PROPERTY and NOT_HAS_PROPERTY; " + *fl.Operator + " is declared but not modelled"
	}
	return ""
}

// matches applies one filter to a contact.
func matches(c *HSContact, fl hsFilter) bool {
	v, has := c.Properties[*fl.PropertyName]
	has = has && v != ""
	eq := func(want string) bool {
		if *fl.PropertyName == "email" {
			return strings.EqualFold(v, want)
		}
		return v == want
	}
	switch *fl.Operator {
	case "EQ":
		return eq(*fl.Value)
	case "NEQ":
		return !eq(*fl.Value)
	case "IN":
		return slices.ContainsFunc(fl.Values, eq)
	case "NOT_IN":
		return !slices.ContainsFunc(fl.Values, eq)
	case "HAS_PROPERTY":
		return has
	case "NOT_HAS_PROPERTY":
		return !has
	}
	return false
}

// search answers CollectionResponseWithTotalSimplePublicObject: groups OR, filters within a group AND,
// ordered by record id, limit per page with paging.next.after while more remain (at most 10,000 in all).
func (f *HubSpot) search(w http.ResponseWriter, r *http.Request) {
	var in hsSearchIn
	if !hsDecode(w, r, &in) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg := f.checkSearch(in); msg != "" {
		hsBad(w, msg)
		return
	}
	var hits []*HSContact
	for _, id := range f.order {
		c := f.contacts[id]
		for _, g := range *in.FilterGroups {
			ok := true
			for _, fl := range *g.Filters {
				ok = ok && matches(c, fl)
			}
			if ok {
				hits = append(hits, c)
				break
			}
		}
	}
	after, _ := strconv.Atoi(*in.After)
	if after+*in.Limit > hsSearchMaxTotal {
		hsBad(w, "Search results are limited to 10,000 records per query")
		return
	}
	out := []map[string]any{}
	for i := after; i < len(hits) && len(out) < *in.Limit; i++ {
		out = append(out, f.objectJSON(hits[i], *in.Properties))
	}
	resp := map[string]any{"total": len(hits), "results": out}
	if next := after + len(out); next < len(hits) {
		resp["paging"] = map[string]any{"next": map[string]any{"after": strconv.Itoa(next), "link": "?after=" + strconv.Itoa(next)}}
	}
	writeJSON(w, http.StatusOK, resp)
}
