package crm

import (
	"context"
	"net/http"
)

// DeleteContact deletes the contact: DELETE /api/3/contacts/{id}.
func (a *activeCampaign) DeleteContact(ctx context.Context, remoteID string) error {
	_, err := a.api.do(ctx, call{method: http.MethodDelete, path: "/contacts/" + pathID(remoteID)}, nil)
	return notFoundIsDone(err)
}

// MergeContacts marks the loser's record for review: ActiveCampaign has no merge endpoint. The tag goes
// first and the note last, so a retry after a failed note repeats only the (idempotent) tag.
func (a *activeCampaign) MergeContacts(ctx context.Context, m Merge) (string, error) {
	if m.LoserRemoteID == "" || m.LoserRemoteID == m.SurvivorRemoteID {
		return "", nil
	}
	tagID, err := a.tagID(ctx, MergeReviewTag, nil)
	if err != nil {
		return "", err
	}
	in := map[string]any{"contactTag": map[string]any{"contact": m.LoserRemoteID, "tag": tagID}}
	if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, nil); err != nil {
		return "", notFoundIsDone(err)
	}
	return "", notFoundIsDone(a.addNote(ctx, m.LoserRemoteID, mergeNote(m), nil))
}
