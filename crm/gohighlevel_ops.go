package crm

import (
	"context"
	"net/http"
)

// DeleteContact deletes the contact: DELETE /contacts/{id}.
func (g *goHighLevel) DeleteContact(ctx context.Context, remoteID string) error {
	_, err := g.do(ctx, call{method: http.MethodDelete, path: "/contacts/" + pathID(remoteID)}, nil)
	return notFoundIsDone(err)
}

// MergeContacts marks the loser's record for review (GoHighLevel's API has no contact merge): the tag
// through the add-tags endpoint (upserts would overwrite tags), then a note naming the survivor.
func (g *goHighLevel) MergeContacts(ctx context.Context, m Merge) (string, error) {
	if m.LoserRemoteID == "" || m.LoserRemoteID == m.SurvivorRemoteID {
		return "", nil
	}
	path := "/contacts/" + pathID(m.LoserRemoteID)
	if _, err := g.do(ctx, call{method: http.MethodPost, path: path + "/tags", in: map[string][]string{"tags": {MergeReviewTag}}}, nil); err != nil {
		return "", notFoundIsDone(err)
	}
	_, err := g.do(ctx, call{method: http.MethodPost, path: path + "/notes", in: map[string]string{"body": mergeNote(m)}}, nil)
	return "", notFoundIsDone(err)
}
