package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/sessions"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// SessionTTL is how long a sign-in lasts, whatever the activity.
const SessionTTL = 12 * time.Hour

const (
	sessionCookie = "leadgate_session"
	keyUserID     = "uid"
	keyPassword   = "pwv"
	keyLoginAt    = "login_at"
	keyWorkspace  = "ws"
	keyFlash      = "flash"
)

// Sessions keeps the signed-in user in a signed and encrypted cookie
// (gorilla/sessions): HttpOnly, SameSite=Lax, Secure when the public URL is
// https, expiring after SessionTTL. It implements handlers.UISessions.
type Sessions struct {
	store *sessions.CookieStore
	now   func() time.Time
}

// NewSessions derives the cookie keys from LEADGATE_SECRET_KEY.
func NewSessions(secretKey string, secure bool) *Sessions {
	st := sessions.NewCookieStore(DeriveKey(secretKey, "session-auth"), DeriveKey(secretKey, "session-encrypt"))
	st.MaxAge(int(SessionTTL.Seconds()))
	st.Options.Path = "/"
	st.Options.HttpOnly = true
	st.Options.Secure = secure
	st.Options.SameSite = http.SameSiteLaxMode
	return &Sessions{store: st, now: time.Now}
}

// DeriveKey derives a 32-byte key for one purpose from the instance secret,
// so sessions, CSRF and secrets at rest never share key material.
func DeriveKey(secretKey, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(secretKey))
	m.Write([]byte("leadgate/" + purpose))
	return m.Sum(nil)
}

// PasswordVersion fingerprints a password hash: a session remembers it, so
// changing the password ends every other session.
func PasswordVersion(u models.User) string {
	sum := sha256.Sum256([]byte(u.PasswordHash))
	return hex.EncodeToString(sum[:8])
}

// SessionUser is who a session cookie says is signed in.
type SessionUser struct {
	UserID          int64
	PasswordVersion string
	LoginAt         time.Time
}

// get returns the request's session; a cookie that fails to decode (tampered,
// expired, old keys) yields a fresh empty session.
func (s *Sessions) get(r *http.Request) *sessions.Session {
	sess, _ := s.store.Get(r, sessionCookie)
	return sess
}

// User reads the signed-in user from the cookie; false when anonymous or expired.
func (s *Sessions) User(r *http.Request) (SessionUser, bool) {
	sess := s.get(r)
	id, ok1 := sess.Values[keyUserID].(int64)
	pwv, ok2 := sess.Values[keyPassword].(string)
	at, ok3 := sess.Values[keyLoginAt].(int64)
	if !ok1 || !ok2 || !ok3 {
		return SessionUser{}, false
	}
	u := SessionUser{UserID: id, PasswordVersion: pwv, LoginAt: time.Unix(at, 0)}
	if s.now().Sub(u.LoginAt) > SessionTTL {
		return SessionUser{}, false
	}
	return u, true
}

// Login starts a fresh session for u.
func (s *Sessions) Login(w http.ResponseWriter, r *http.Request, u models.User) error {
	sess := s.get(r)
	ws := sess.Values[keyWorkspace]
	for k := range sess.Values {
		delete(sess.Values, k)
	}
	sess.Values[keyUserID] = u.ID
	sess.Values[keyPassword] = PasswordVersion(u)
	sess.Values[keyLoginAt] = s.now().Unix()
	if ws != nil {
		sess.Values[keyWorkspace] = ws
	}
	sess.Options.MaxAge = int(SessionTTL.Seconds())
	return s.save(w, r, sess)
}

// Logout expires the cookie.
func (s *Sessions) Logout(w http.ResponseWriter, r *http.Request) error {
	sess := s.get(r)
	for k := range sess.Values {
		delete(sess.Values, k)
	}
	sess.Options.MaxAge = -1
	return s.save(w, r, sess)
}

// Workspace is the slug of the workspace opened last.
func (s *Sessions) Workspace(r *http.Request) string {
	slug, _ := s.get(r).Values[keyWorkspace].(string)
	return slug
}

// SetWorkspace remembers the workspace opened last.
func (s *Sessions) SetWorkspace(w http.ResponseWriter, r *http.Request, slug string) error {
	sess := s.get(r)
	sess.Values[keyWorkspace] = slug
	return s.save(w, r, sess)
}

// SetFlash queues a message for the next page.
func (s *Sessions) SetFlash(w http.ResponseWriter, r *http.Request, f views.Flash) error {
	sess := s.get(r)
	sess.Values[keyFlash] = f.Kind + "|" + f.Message
	return s.save(w, r, sess)
}

// TakeFlash returns and clears the queued message.
func (s *Sessions) TakeFlash(w http.ResponseWriter, r *http.Request) *views.Flash {
	sess := s.get(r)
	raw, ok := sess.Values[keyFlash].(string)
	if !ok {
		return nil
	}
	delete(sess.Values, keyFlash)
	_ = s.save(w, r, sess) // a failed clear shows the message twice at worst
	for i := range len(raw) {
		if raw[i] == '|' {
			return &views.Flash{Kind: raw[:i], Message: raw[i+1:]}
		}
	}
	return &views.Flash{Kind: "ok", Message: raw}
}

func (s *Sessions) save(w http.ResponseWriter, r *http.Request, sess *sessions.Session) error {
	if err := sess.Save(r, w); err != nil {
		return fmt.Errorf("web: save session: %w", err)
	}
	return nil
}
