package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/leadgate/leadgate/ingest/normalize"
)

// Stages is the pipeline of the scenario, lowest first; a stage's index is its rank.
var Stages = []string{"Discovered", "Engaged", "SQL", "Closed Won"}

// Channel is one lead source of the scenario: its event type and the stage that event proposes.
type Channel struct {
	Name      string // source name and channel in leadgate
	EventType string
	Stage     int // rank in Stages
}

// Channels are the four senders of a journey.
var Channels = []Channel{
	{Name: "web_form", EventType: "form_submitted", Stage: 0},
	{Name: "cold_email", EventType: "email_replied", Stage: 1},
	{Name: "voice_agent", EventType: "call_qualified", Stage: 2},
	{Name: "billing", EventType: "deal_won", Stage: 3},
}

// Journey shape: the share of leads that take each step.
const (
	shareEmailReply  = 0.75
	shareVoice       = 0.55
	shareWonOfVoice  = 0.35 // of the leads that were qualified by voice
	shareRepeatForm  = 0.10 // a second form submission with other surface forms
	shareSameSecond  = 0.30 // of leads with both email and voice: both in the same second, sent together
	shareDuplicate   = 0.10 // deliveries sent twice, concurrently (in-flight duplicates)
	maxJitter        = 1500 * time.Millisecond
	maxDuplicateSkew = 30 * time.Millisecond
)

// Lead is one real person.
type Lead struct {
	Index          int
	Email, Phone   string // canonical: normalized email, E.164 phone
	First, Last    string
	Company        string
	Events         []int // indexes into Scenario.Events, in journey order
	HighestJourney int   // highest stage rank any of its events proposes
	phoneDigits    string
}

// Event is one unique webhook: one idempotency id, sent once or (Duplicate) twice.
type Event struct {
	Index     int
	Lead      int
	Channel   int    // index into Channels
	ID        string // webhook-id: the delivery's idempotency id
	Occurred  time.Duration
	SendAt    time.Duration // when the first delivery leaves, from the start of the traffic
	Duplicate bool          // a second, concurrent delivery of the same webhook
	DupSkew   time.Duration
	Email     string // surface form as sent
	Phone     string
}

// Stage is the rank the event proposes.
func (e Event) Stage() int { return Channels[e.Channel].Stage }

// Scenario is the whole traffic of a run, the same for both modes given the seed.
type Scenario struct {
	Leads  []Lead
	Events []Event // ordered by SendAt
	Window time.Duration
	RunID  string
}

// Generate builds the "multi-channel race" scenario: n leads, each with a journey (form → email reply
// → voice qualification → closed-won for a fraction), spread over a send window sized for rate unique
// events per second, with out-of-order jitter, same-second multi-channel updates, repeat submissions in
// other surface forms, and in-flight duplicates. The same seed gives the same scenario.
func Generate(n int, rate float64, seed uint64) Scenario {
	rng := rand.New(rand.NewPCG(seed, 0xc4a05))
	sc := Scenario{RunID: fmt.Sprintf("%08x", rng.Uint32())}
	expected := float64(n) * (1 + shareEmailReply + shareVoice + shareVoice*shareWonOfVoice + shareRepeatForm)
	sc.Window = time.Duration(expected / rate * float64(time.Second))
	usedPhones := map[string]bool{}
	for i := range n {
		l := newLead(rng, i, usedPhones)
		start := time.Duration(rng.Int64N(int64(sc.Window) + 1))
		sc.addJourney(rng, &l, start)
		sc.Leads = append(sc.Leads, l)
	}
	order := make([]int, len(sc.Events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(sc.Events[a].SendAt - sc.Events[b].SendAt) })
	sorted := make([]Event, len(sc.Events))
	remap := make([]int, len(sc.Events))
	for to, from := range order {
		sorted[to] = sc.Events[from]
		sorted[to].Index = to
		remap[from] = to
	}
	sc.Events = sorted
	for i := range sc.Leads {
		for k, e := range sc.Leads[i].Events {
			sc.Leads[i].Events[k] = remap[e]
		}
	}
	return sc
}

var (
	firstNames = []string{"Jane", "John", "Maria", "Wei", "Aisha", "Carlos", "Olga", "Kenji", "Fatima", "Liam", "Noor", "Sven"}
	lastNames  = []string{"Doe", "Smith", "Garcia", "Chen", "Khan", "Silva", "Ivanova", "Tanaka", "Haddad", "Murphy", "Okafor", "Berg"}
	domains    = []string{"example.com", "acme.io", "northwind.test", "globex.example", "initech.test"}
	areaCodes  = []string{"415", "212", "312", "617", "206", "512", "303", "404"}
)

func newLead(rng *rand.Rand, i int, used map[string]bool) Lead {
	first, last := firstNames[rng.IntN(len(firstNames))], lastNames[rng.IntN(len(lastNames))]
	l := Lead{Index: i, First: first, Last: last, Company: last + " " + []string{"Inc", "LLC", "GmbH", "Ltd"}[rng.IntN(4)]}
	l.Email = strings.ToLower(fmt.Sprintf("%s.%s.%d@%s", first, last, i, domains[rng.IntN(len(domains))]))
	for {
		digits := fmt.Sprintf("%s%d%02d%04d", areaCodes[rng.IntN(len(areaCodes))], 2+rng.IntN(8), rng.IntN(100), rng.IntN(10000))
		p := normalize.Phone(digits, "US")
		if p.Valid && !used[p.Value] {
			used[p.Value] = true
			l.Phone, l.phoneDigits = p.Value, digits
			break
		}
	}
	return l
}

// step is one journey step before it becomes an Event.
type step struct {
	channel  int
	occurred time.Duration
}

// addJourney appends the lead's events: form at start, then the later steps a few hundred ms to two
// seconds apart; each delivery leaves after a random jitter, so steps often arrive out of order.
func (sc *Scenario) addJourney(rng *rand.Rand, l *Lead, start time.Duration) {
	gap := func() time.Duration { return time.Duration(300+rng.IntN(1700)) * time.Millisecond }
	at := start
	steps := []step{{0, at}}
	email := rng.Float64() < shareEmailReply
	voice := rng.Float64() < shareVoice
	if email {
		at += gap()
		steps = append(steps, step{1, at})
	}
	sameSecond := email && voice && rng.Float64() < shareSameSecond
	if voice {
		if sameSecond {
			// Same wall-clock second as the email reply, a few ms to a few hundred ms later.
			sec := at.Truncate(time.Second)
			steps[len(steps)-1].occurred = sec + time.Duration(rng.IntN(400))*time.Millisecond
			at = sec + time.Duration(500+rng.IntN(450))*time.Millisecond
		} else {
			at += gap()
		}
		steps = append(steps, step{2, at})
		if rng.Float64() < shareWonOfVoice {
			at += gap()
			steps = append(steps, step{3, at})
		}
	}
	if rng.Float64() < shareRepeatForm {
		steps = append(steps, step{0, start + gap() + gap()})
	}
	var together time.Duration // send time shared by the same-second pair
	for k, s := range steps {
		e := Event{
			Index: len(sc.Events), Lead: l.Index, Channel: s.channel, Occurred: s.occurred,
			ID:    fmt.Sprintf("msg_%s_%d_%d", sc.RunID, l.Index, k),
			Email: emailForm(rng, l.Email), Phone: phoneForm(rng, l.phoneDigits),
		}
		e.SendAt = s.occurred + time.Duration(rng.Int64N(int64(maxJitter)))
		if sameSecond && (s.channel == 1 || s.channel == 2) {
			if together == 0 {
				together = max(steps[1].occurred, steps[2].occurred) + time.Duration(rng.Int64N(int64(maxJitter)))
			}
			e.SendAt = together + time.Duration(rng.IntN(5))*time.Millisecond
		}
		if rng.Float64() < shareDuplicate {
			e.Duplicate, e.DupSkew = true, time.Duration(rng.Int64N(int64(maxDuplicateSkew)))
		}
		l.Events = append(l.Events, e.Index)
		l.HighestJourney = max(l.HighestJourney, e.Stage())
		sc.Events = append(sc.Events, e)
	}
}

// emailForm returns a surface form of a canonical (lower-case) email: as is, capitalized, upper-case,
// or padded with spaces. All normalize to the same address.
func emailForm(rng *rand.Rand, email string) string {
	switch rng.IntN(5) {
	case 1:
		local, domain, _ := strings.Cut(email, "@")
		parts := strings.Split(local, ".")
		for i, p := range parts {
			if p != "" {
				parts[i] = strings.ToUpper(p[:1]) + p[1:]
			}
		}
		return strings.Join(parts, ".") + "@" + strings.ToUpper(domain[:1]) + domain[1:]
	case 2:
		return strings.ToUpper(email)
	case 3:
		return " " + email + " "
	case 4:
		return email + " "
	}
	return email
}

// phoneForm returns one of the ways people and tools write a US number (10 national digits).
func phoneForm(rng *rand.Rand, d string) string {
	a, e, s := d[:3], d[3:6], d[6:]
	switch rng.IntN(6) {
	case 0:
		return "(" + a + ") " + e + "-" + s
	case 1:
		return "+1 " + a + " " + e + " " + s
	case 2:
		return a + "." + e + "." + s
	case 3:
		return "+1" + d
	case 4:
		return "1-" + a + "-" + e + "-" + s
	}
	return a + "-" + e + "-" + s
}
