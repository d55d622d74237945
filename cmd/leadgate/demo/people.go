package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var firstNames = []string{"Ada", "Grace", "Linus", "Margaret", "Alan", "Katherine", "Dennis", "Barbara", "Ken", "Radia",
	"José", "Zoë", "Søren", "Aiko", "Priya", "Mateo", "Chloé", "Olu", "Fatima", "Noah"}
var lastNames = []string{"Lovelace", "Hopper", "Torvalds", "Hamilton", "Turing", "Johnson", "Ritchie", "Liskov", "Thompson",
	"Perlman", "García", "O'Neil", "Kierkegaard", "Tanaka", "Patel", "Rossi", "Dubois", "Adeyemi", "Haddad", "Smith"}
var companies = []string{"Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay Industries", "Stark Industries", "Wayne Enterprises"}
var domains = []string{"example.com", "example.org", "mail.example.net", "corp.example.io"}

// person is one demo lead and how far its journey has gone.
type person struct {
	first, last, company string
	email, phone         string // canonical forms; senders vary the surface form
	step                 int    // 0 new, 1 discovered, 2 engaged, 3 SQL, 4 closed
	leadgenID            string
}

func newPerson(rng *rand.Rand, n int) *person {
	f, l := firstNames[rng.IntN(len(firstNames))], lastNames[rng.IntN(len(lastNames))]
	local := strings.ToLower(strings.NewReplacer(" ", "", "'", "", "é", "e", "ë", "e", "ø", "o").Replace(f + "." + l))
	return &person{first: f, last: l, company: companies[rng.IntN(len(companies))],
		email: fmt.Sprintf("%s.%d@%s", local, n, domains[rng.IntN(len(domains))]),
		phone: fmt.Sprintf("+1415%07d", 5550000+n%10000*100+rng.IntN(100))}
}

// emailForm is how a sender might type the email: case and stray spaces vary.
func (p *person) emailForm(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return strings.ToUpper(p.email[:1]) + p.email[1:]
	case 1:
		return " " + p.email + " "
	case 2:
		return strings.ToUpper(p.email)
	}
	return p.email
}

// phoneForm renders the E.164 phone the way forms and dialers do.
func (p *person) phoneForm(rng *rand.Rand) string {
	d := strings.TrimPrefix(p.phone, "+1")
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("(%s) %s-%s", d[:3], d[3:6], d[6:])
	case 1:
		return fmt.Sprintf("+1 %s-%s-%s", d[:3], d[3:6], d[6:])
	case 2:
		return fmt.Sprintf("%s.%s.%s", d[:3], d[3:6], d[6:])
	}
	return p.phone
}
