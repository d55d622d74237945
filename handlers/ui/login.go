package ui

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gorilla/csrf"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// ShowLogin renders the sign-in form.
func (u *UI) ShowLogin(w http.ResponseWriter, r *http.Request) {
	v := views.LoginView{Assets: u.Assets, CSRFToken: csrf.Token(r), Next: SafeNext(r.URL.Query().Get("next"))}
	if r.URL.Query().Get("signed_out") == "1" {
		v.Notice = "You are signed out."
	}
	u.render(w, r, http.StatusOK, views.LoginPage(v))
}

// Login checks the credentials under the throttle and starts a session.
func (u *UI) Login(w http.ResponseWriter, r *http.Request) {
	email := strings.ToLower(strings.TrimSpace(r.PostFormValue("email")))
	password := r.PostFormValue("password")
	v := views.LoginView{Assets: u.Assets, CSRFToken: csrf.Token(r), Email: email, Next: SafeNext(r.PostFormValue("next"))}
	keys := signInKeys(r, email)
	now := u.now()
	if blocked, wait := u.Limiter.Blocked(r.Context(), now, keys...); blocked {
		mins := int(math.Ceil(wait.Minutes()))
		v.Error = fmt.Sprintf("Too many failed sign-ins. Try again in %d minute(s).", mins)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		u.render(w, r, http.StatusTooManyRequests, views.LoginPage(v))
		return
	}
	user, err := u.Store.UserAuthenticate(r.Context(), email, password)
	if errors.Is(err, models.ErrNotFound) {
		u.Limiter.Fail(r.Context(), now, keys...)
		u.Log.Info("sign-in failed", "email", email, "client_ip", clientIP(r))
		v.Error = "That email and password do not match an active account."
		u.render(w, r, http.StatusUnauthorized, views.LoginPage(v))
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.Limiter.Reset(r.Context(), keys[0])
	if err := u.Sessions.Login(w, r, user); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.Log.Info("signed in", "user_id", user.ID, "email", user.Email)
	if user.MustChangePassword {
		redirect(w, r, "/account/password")
		return
	}
	redirect(w, r, cmp.Or(v.Next, "/"))
}

// SafeNext returns next when it is a path on this site to return to after sign-in, else "". It refuses
// anything a browser could read as another origin ("//evil", "/\evil", "https://…") and the sign-in
// pages themselves.
func SafeNext(next string) string {
	if next == "" || len(next) > 2000 || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\x00\r\n\t") {
		return ""
	}
	p, err := url.Parse(next)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil {
		return ""
	}
	if p.Path == "/login" || p.Path == "/logout" || strings.HasPrefix(p.Path, "/static/") {
		return ""
	}
	return next
}

// Logout ends the session.
func (u *UI) Logout(w http.ResponseWriter, r *http.Request) {
	if err := u.Sessions.Logout(w, r); err != nil {
		u.serverError(w, r, err)
		return
	}
	redirect(w, r, "/login?signed_out=1")
}

// LogoutEverywhere ends every sign-in of the account, this one included.
func (u *UI) LogoutEverywhere(w http.ResponseWriter, r *http.Request) {
	p, _ := principal.From(r.Context())
	n, err := u.Sessions.EndOtherSessions(r, p.ID, models.SessionEndedEverywhere)
	if err == nil {
		err = u.Sessions.Logout(w, r)
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.Log.Info("signed out everywhere", "user_id", p.ID, "other_sessions", n)
	redirect(w, r, "/login?signed_out=1")
}

// Home sends the user to the workspace they used last, else the first one.
func (u *UI) Home(w http.ResponseWriter, r *http.Request) {
	list, err := u.Store.WorkspaceList(r.Context(), false)
	if err == nil {
		list, err = handlers.AllowedWorkspaces(r.Context(), u.Store, list)
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if len(list) == 0 {
		redirect(w, r, "/workspaces")
		return
	}
	target := list[0].Slug
	last := u.Sessions.Workspace(r)
	for _, ws := range list {
		if ws.Slug == last {
			target = last
		}
	}
	redirect(w, r, "/w/"+target+"/")
}

// ShowPassword renders the change-password form (forced after a one-time password).
func (u *UI) ShowPassword(w http.ResponseWriter, r *http.Request) {
	p, _ := principal.From(r.Context())
	user, err := u.Store.UserByID(r.Context(), p.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	live, err := u.Store.UISessionsLive(r.Context(), user.ID, u.now())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.page(w, r, http.StatusOK, views.NavAccount, "Change password", func(m views.PageMeta) templ.Component {
		return views.PasswordPage(m, views.PasswordView{Forced: user.MustChangePassword, LiveSessions: live})
	})
}

// ChangePassword replaces the user's password after checking the current one.
func (u *UI) ChangePassword(w http.ResponseWriter, r *http.Request) {
	p, _ := principal.From(r.Context())
	user, err := u.Store.UserByID(r.Context(), p.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	current, next, confirm := r.PostFormValue("current"), r.PostFormValue("new"), r.PostFormValue("confirm")
	errs := views.FieldErrors{}
	key := "password:" + strconv.FormatInt(user.ID, 10)
	now := u.now()
	switch blocked, _ := u.Limiter.Blocked(r.Context(), now, key); {
	case blocked:
		errs["current"] = "Too many wrong attempts. Try again later."
	case !user.PasswordIs(current):
		u.Limiter.Fail(r.Context(), now, key)
		errs["current"] = "This is not your current password."
	case len(next) < models.MinPasswordLen:
		errs["new"] = fmt.Sprintf("Use at least %d characters.", models.MinPasswordLen)
	case next == current:
		errs["new"] = "Choose a password different from the current one."
	case next != confirm:
		errs["confirm"] = "The two new passwords differ."
	}
	if errs.Any() {
		u.page(w, r, http.StatusUnprocessableEntity, views.NavAccount, "Change password", func(m views.PageMeta) templ.Component {
			return views.PasswordPage(m, views.PasswordView{Forced: user.MustChangePassword, Errors: errs})
		})
		return
	}
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.UserSetPassword(r.Context(), user.ID, next); err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, 0, "user.change_password", "user", strconv.FormatInt(user.ID, 10),
			map[string]any{"must_change_password": user.MustChangePassword}, map[string]any{"must_change_password": false})
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	// Every other sign-in of the account ends; this one is replaced by a fresh one (the cookie
	// carries a fingerprint of the password hash too).
	if _, err = u.Sessions.EndOtherSessions(r, user.ID, models.SessionEndedPasswordChange); err == nil {
		if user, err = u.Store.UserByID(r.Context(), user.ID); err == nil {
			err = u.Sessions.Login(w, r, user)
		}
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.Limiter.Reset(r.Context(), key)
	u.flashRedirect(w, r, "/", "ok", "Your password was changed.")
}
