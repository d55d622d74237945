package web

import (
	"context"
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
	keySession    = "sid"
	keyPassword   = "pwv"
	keyLoginAt    = "login_at"
	keyWorkspace  = "ws"
	keyFlash      = "flash"
)

// Sessions keeps the signed-in user in a signed and encrypted cookie
// (gorilla/sessions): HttpOnly, SameSite=Lax, Secure when the public URL is
// https, expiring after SessionTTL. The cookie also carries the token of a
// sign-in recorded on the server (ui_sessions): signing out ends that record,
// so a copy of the cookie taken before is refused after. It implements
// ui.Sessions.
type Sessions struct {
	store *sessions.CookieStore
	db    *models.Store
	now   func() time.Time
}

// NewSessions derives the cookie keys from LEADGATE_SECRET_KEY; db holds the sign-in records.
func NewSessions(secretKey string, secure bool, db *models.Store) *Sessions {
	st := sessions.NewCookieStore(DeriveKey(secretKey, "session-auth"), DeriveKey(secretKey, "session-encrypt"))
	st.MaxAge(int(SessionTTL.Seconds()))
	st.Options.Path = "/"
	st.Options.HttpOnly = true
	st.Options.Secure = secure
	st.Options.SameSite = http.SameSiteLaxMode
	return &Sessions{store: st, db: db, now: time.Now}
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
	// Token names the sign-in on the server; Live checks it has not ended.
	Token string
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
	token, _ := sess.Values[keySession].(string)
	u := SessionUser{UserID: id, PasswordVersion: pwv, LoginAt: time.Unix(at, 0), Token: token}
	if s.now().Sub(u.LoginAt) > SessionTTL {
		return SessionUser{}, false
	}
	return u, true
}

// Live reports whether the cookie's sign-in is still open on the server (not signed out, not ended by
// "sign out everywhere" or a password change, not expired).
func (s *Sessions) Live(ctx context.Context, u SessionUser) (bool, error) {
	return s.db.UISessionLive(ctx, u.Token, u.UserID, s.now())
}

// Login starts a fresh session for u: a new server-side sign-in, and the
// cookie's previous one (if any) ends, so a token planted before sign-in is worthless.
func (s *Sessions) Login(w http.ResponseWriter, r *http.Request, u models.User) error {
	sess := s.get(r)
	if old, ok := sess.Values[keySession].(string); ok {
		if err := s.db.UISessionEnd(r.Context(), old, s.now()); err != nil {
			return err
		}
	}
	token, err := s.db.UISessionStart(r.Context(), u.ID, s.now(), SessionTTL)
	if err != nil {
		return err
	}
	var ws any = u.LastWorkspace
	if u.LastWorkspace == "" {
		ws = sess.Values[keyWorkspace]
	}
	for k := range sess.Values {
		delete(sess.Values, k)
	}
	sess.Values[keyUserID] = u.ID
	sess.Values[keySession] = token
	sess.Values[keyPassword] = PasswordVersion(u)
	sess.Values[keyLoginAt] = s.now().Unix()
	if ws != nil {
		sess.Values[keyWorkspace] = ws
	}
	sess.Options.MaxAge = int(SessionTTL.Seconds())
	return s.save(w, r, sess)
}

// Logout ends the sign-in on the server and expires the cookie.
func (s *Sessions) Logout(w http.ResponseWriter, r *http.Request) error {
	sess := s.get(r)
	if token, ok := sess.Values[keySession].(string); ok {
		if err := s.db.UISessionEnd(r.Context(), token, s.now()); err != nil {
			return err
		}
	}
	for k := range sess.Values {
		delete(sess.Values, k)
	}
	sess.Options.MaxAge = -1
	return s.save(w, r, sess)
}

// EndOtherSessions ends every sign-in of userID except the request's own and says how many ended.
func (s *Sessions) EndOtherSessions(r *http.Request, userID int64, reason string) (int64, error) {
	token, _ := s.get(r).Values[keySession].(string)
	return s.db.UISessionEndAll(r.Context(), userID, token, reason, s.now())
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
	if id, ok := sess.Values[keyUserID].(int64); ok {
		if err := s.db.UserSetLastWorkspace(r.Context(), id, slug); err != nil {
			return err
		}
	}
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
