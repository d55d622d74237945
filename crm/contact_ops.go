package crm

import (
	"context"
	"fmt"
)

// MergeReviewTag is the tag put on the duplicate record when a leadgate merge is carried to a CRM that has
// no merge endpoint (ActiveCampaign, GoHighLevel): a person reviews and merges or deletes it in the CRM.
const MergeReviewTag = "leadgate-merged-duplicate"

// Deleter is implemented by destinations that can delete a contact record (erase with crm_delete).
type Deleter interface {
	// DeleteContact deletes the record. A record that does not exist (404) counts as deleted: a retry
	// after a lost answer must not fail.
	DeleteContact(ctx context.Context, remoteID string) error
}

// Merge names the two records of a leadgate merge at one destination.
type Merge struct {
	SurvivorRemoteID, LoserRemoteID     string
	SurvivorLeadgateID, LoserLeadgateID string
}

// Merger is implemented by destinations that carry a leadgate merge to the CRM.
type Merger interface {
	// MergeContacts folds the loser's record into the survivor's (HubSpot's merge endpoint) or marks it for
	// review (tag MergeReviewTag and a note naming the survivor) where the CRM has no merge endpoint; the
	// survivor's own record is brought up to date by the normal sync. It returns the surviving record's id
	// when the CRM gave it a new one (a HubSpot merge may), else "". A record that no longer exists counts
	// as merged already.
	MergeContacts(ctx context.Context, m Merge) (newSurvivorID string, err error)
}

// mergeNote is the note put on the duplicate record.
func mergeNote(m Merge) string {
	return fmt.Sprintf("leadgate merged this contact (leadgate id %s) into contact %s (leadgate id %s). "+
		"This record is a duplicate kept for review: leadgate now updates only %s.",
		m.LoserLeadgateID, m.SurvivorRemoteID, m.SurvivorLeadgateID, m.SurvivorRemoteID)
}

// notFoundIsDone turns a 404 into success: the record is already gone (deleted or merged away).
func notFoundIsDone(err error) error {
	if err != nil && ClassOf(err) == NotFound {
		return nil
	}
	return err
}
