package signature

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Twilio: X-Twilio-Signature = base64(HMAC-SHA1(auth token, URL + params)).
// For form bodies the params are every POST field sorted by name, each as
// name+value (repeated names: values sorted, duplicates once, as Twilio's SDKs
// do). JSON bodies are not signed as params: Twilio adds bodySHA256=<hex
// SHA-256 of the body> to the URL and signs the URL alone. Like Twilio's SDKs,
// the URL is tried as given, without its port and with the scheme's default
// port, since proxies disagree about it.
const (
	headerTwilioSignature = "X-Twilio-Signature"
	twilioBodyHashParam   = "bodySHA256"
)

func verifyTwilio(cfg Config, req Request, _ time.Time) error {
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	sigText, err := requireHeader(req.Header, headerTwilioSignature)
	if err != nil {
		return err
	}
	sig, err := decodeBase64(sigText)
	if err != nil || len(sig) != sha1.Size {
		return reject("malformed signature in header %s", headerTwilioSignature)
	}
	if req.URL == "" {
		return reject("request URL unknown, cannot verify Twilio signature")
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return reject("malformed request URL")
	}
	var params string
	if want := u.Query().Get(twilioBodyHashParam); want != "" {
		sum := sha256.Sum256(req.Body)
		got := hex.EncodeToString(sum[:])
		if !hmac.Equal([]byte(got), []byte(strings.ToLower(want))) {
			return reject("body hash mismatch (bodySHA256)")
		}
	} else if len(req.Body) > 0 {
		form, err := url.ParseQuery(string(req.Body))
		if err != nil {
			return reject("malformed form body")
		}
		params = twilioParams(form)
	}
	for _, candidate := range twilioURLVariants(req.URL) {
		if anyKeyMatches(sha1.New, keys, [][]byte{sig}, []byte(candidate), []byte(params)) {
			return nil
		}
	}
	return errMismatch()
}

// signTwilio signs req as Twilio would: a JSON body (by Content-Type) gets
// bodySHA256 appended to req.URL; anything else is treated as a form.
func signTwilio(sc SignConfig, req *Request, _ time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	if req.URL == "" {
		return errMissingURL
	}
	var params string
	if isJSON(req) {
		sum := sha256.Sum256(req.Body)
		sep := "?"
		if strings.Contains(req.URL, "?") {
			sep = "&"
		}
		req.URL += sep + twilioBodyHashParam + "=" + hex.EncodeToString(sum[:])
	} else if len(req.Body) > 0 {
		form, err := url.ParseQuery(string(req.Body))
		if err != nil {
			return err
		}
		params = twilioParams(form)
	}
	sum := macOf(sha1.New, []byte(secret), []byte(req.URL), []byte(params))
	setHeader(req, headerTwilioSignature, base64.StdEncoding.EncodeToString(sum))
	return nil
}

// isJSON reports whether req's Content-Type is JSON.
func isJSON(req *Request) bool {
	ct, _ := headerValue(req.Header, "Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// twilioParams concatenates form fields sorted by name, each name+value.
func twilioParams(form url.Values) string {
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		values := slices.Clone(form[name])
		slices.Sort(values)
		for _, v := range slices.Compact(values) {
			b.WriteString(name)
			b.WriteString(v)
		}
	}
	return b.String()
}

// twilioURLVariants returns raw, raw without its port, and raw with the
// scheme's default port, without duplicates.
func twilioURLVariants(raw string) []string {
	variants := []string{raw}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return variants
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo, hostport := "", authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, hostport = authority[:at+1], authority[at+1:]
	}
	host, hasPort := splitPort(hostport)
	build := func(hp string) string { return scheme + "://" + userinfo + hp + tail }
	if hasPort {
		variants = append(variants, build(host))
	} else {
		switch strings.ToLower(scheme) {
		case "https":
			variants = append(variants, build(host+":443"))
		case "http":
			variants = append(variants, build(host+":80"))
		}
	}
	return variants
}

// splitPort strips a ":port" from host[:port] (IPv6 literals in brackets).
func splitPort(hostport string) (host string, hadPort bool) {
	i := strings.LastIndexByte(hostport, ':')
	if i < 0 || i < strings.LastIndexByte(hostport, ']') {
		return hostport, false
	}
	return hostport[:i], true
}
