package crm

// dealStep is the deal-mode action planned for one existing contact.
type dealStep struct {
	create   bool   // no deal in the pipeline yet
	id       string // the contact's deal in the pipeline
	current  string // its current stage id
	move     string // stage id to move it to ("" = leave it)
	conflict *FieldConflict
}

func (d dealStep) moves() bool { return d.create || d.move != "" }

// dealStageField names the deal stage in FieldConflict.
const dealStageField = "deal.stage"

// decideDeal plans an existing deal: leave it at the target, move it there, or, when its stage changed
// since leadgate last set it (prevStage), leave it and report a conflict.
func decideDeal(id, current, target, prevStage string) dealStep {
	step := dealStep{id: id, current: current}
	switch {
	case current == target:
	case prevStage != "" && current != prevStage:
		step.conflict = &FieldConflict{Field: dealStageField, OurLast: prevStage, Remote: current}
	default:
		step.move = target
	}
	return step
}

// remoteDeal is a contact's deal as an adapter read it: an ActiveCampaign deal, a GoHighLevel opportunity.
type remoteDeal struct{ id, stage string }

// planDealStep plans the contact's deal toward target: the deal leadgate last wrote (prev[PrevDealID])
// while byID still finds it, else the contact's oldest deal in the pipeline (oldest, nil when it has
// none), else a new one.
func planDealStep(prev map[string]string, target string, byID func(id string) (*remoteDeal, error),
	oldest func() (*remoteDeal, error)) (dealStep, error) {
	var d *remoteDeal
	if id := prev[PrevDealID]; id != "" {
		found, err := byID(id)
		switch {
		case err == nil:
			d = found
		case ClassOf(err) != NotFound: // a deleted deal: look for another, or create one
			return dealStep{}, err
		}
	}
	if d == nil {
		var err error
		if d, err = oldest(); err != nil {
			return dealStep{}, err
		}
	}
	if d == nil {
		return dealStep{create: true}, nil
	}
	return decideDeal(d.id, d.stage, target, prev[PrevDealStage]), nil
}

// record notes in written what the step left: the deal's id (createdID for a created one), and its stage
// when leadgate set it or found it already at target (a deal left where a person moved it keeps
// leadgate's last stage, so the edit is still detected next time).
func (d dealStep) record(written map[string]string, target, createdID string) {
	switch {
	case d.create:
		written[PrevDealID], written[PrevDealStage] = createdID, target
	case d.move != "":
		written[PrevDealID], written[PrevDealStage] = d.id, d.move
	default:
		written[PrevDealID] = d.id
		if d.current == target {
			written[PrevDealStage] = target
		}
	}
}
