package crm

import (
	"context"
	"net/http"
)

// DeleteContact archives the contact: DELETE /crm/v3/objects/contacts/{id} (204). HubSpot keeps archived
// records restorable for 90 days; a GDPR-grade permanent delete is POST .../contacts/gdpr-delete, which
// leadgate does not use because it also blocks the email from being re-created.
func (h *hubSpot) DeleteContact(ctx context.Context, remoteID string) error {
	_, err := h.do(ctx, call{method: http.MethodDelete, path: "/crm/v3/objects/contacts/" + pathID(remoteID)}, nil)
	return notFoundIsDone(err)
}

// MergeContacts calls POST /crm/v3/objects/contacts/merge {primaryObjectId, objectIdToMerge}. HubSpot may
// give the merged record a new id: it is returned so that leadgate maps the survivor to it.
func (h *hubSpot) MergeContacts(ctx context.Context, m Merge) (string, error) {
	if m.SurvivorRemoteID == "" || m.LoserRemoteID == "" || m.SurvivorRemoteID == m.LoserRemoteID {
		return "", nil
	}
	var out hsObject
	in := map[string]string{"primaryObjectId": m.SurvivorRemoteID, "objectIdToMerge": m.LoserRemoteID}
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/contacts/merge", in: in, out: &out}, nil)
	if err != nil {
		return "", notFoundIsDone(err)
	}
	if id := string(out.ID); id != m.SurvivorRemoteID {
		return id, nil
	}
	return "", nil
}
