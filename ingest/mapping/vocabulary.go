package mapping

// StageTerm is one value of a provider's standard stage vocabulary and its
// place in a funnel (0 the first stage, 1 the last).
type StageTerm struct {
	Value    string
	Position float64
}

// hubspotLifecycleStages are the values of HubSpot's default contact property
// lifecyclestage (HubSpot knowledge base, "Use lifecycle stages"), lowest
// first; "other" is HubSpot's catch-all and starts at the top of the funnel.
var hubspotLifecycleStages = []StageTerm{
	{"subscriber", 0}, {"lead", 0}, {"marketingqualifiedlead", 1.0 / 3}, {"salesqualifiedlead", 2.0 / 3},
	{"opportunity", 2.0 / 3}, {"customer", 1}, {"evangelist", 1}, {"other", 0},
}

// StageVocabulary returns the standard stage values a source kind's provider
// sends (nil: the kind has none).
func StageVocabulary(kind string) []StageTerm {
	if kind == "hubspot" {
		return append([]StageTerm(nil), hubspotLifecycleStages...)
	}
	return nil
}
