package opac_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

func TestSignIn(t *testing.T) {
	e := newEnv(t)

	t.Run("OK", func(t *testing.T) {
		c := e.client()
		r := e.get(t, c, "/account")
		if r.Status != http.StatusSeeOther || r.Location != "/signin?next=%2Faccount" {
			t.Fatalf("anonymous /account: %d to %q", r.Status, r.Location)
		}
		r = e.post(t, c, "/signin", url.Values{"card": {"p0001"}, "pin": {"1234"}, "next": {"/account/fines"}})
		if r.Status != http.StatusSeeOther || r.Location != "/account/fines" {
			t.Fatalf("sign in: %d to %q\n%s", r.Status, r.Location, text(r.Body))
		}
		var cookie *http.Cookie
		for _, ck := range c.Jar.Cookies(mustURL(e.Srv.URL)) {
			if ck.Name == opac.CookieName {
				cookie = ck
			}
		}
		if cookie == nil {
			t.Fatal("no stacks_opac cookie")
		}
		txt := text(e.get(t, c, "/account").Body)
		if !strings.Contains(txt, "Alex Reader") || !strings.Contains(txt, "Sign out") {
			t.Errorf("My account:\n%s", txt)
		}
		r = e.post(t, c, "/signout", nil)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", r.Status)
		}
		if r := e.get(t, c, "/account"); r.Status != http.StatusSeeOther {
			t.Errorf("/account after sign-out: %d", r.Status)
		}
	})

	t.Run("ErrGenericMessage", func(t *testing.T) {
		wrong := e.post(t, e.client(), "/signin", url.Values{"card": {"P0005"}, "pin": {"9999"}})
		unknown := e.post(t, e.client(), "/signin", url.Values{"card": {"NOSUCHCARD"}, "pin": {"1234"}})
		if wrong.Status != http.StatusUnauthorized || unknown.Status != http.StatusUnauthorized {
			t.Fatalf("statuses %d and %d, want 401", wrong.Status, unknown.Status)
		}
		msg := "The card number or PIN is not right."
		if !strings.Contains(wrong.Body, msg) || !strings.Contains(unknown.Body, msg) {
			t.Errorf("not the generic message:\n%s\n%s", text(wrong.Body), text(unknown.Body))
		}
		if statements(t, wrong) != statements(t, unknown) {
			t.Errorf("a wrong PIN ran %d statements, an unknown card %d: the count tells which cards exist", statements(t, wrong), statements(t, unknown))
		}
		for _, form := range []url.Values{{}, {"card": {"P0001"}}, {"card": {strings.Repeat("x", 5000)}, "pin": {"1"}}, {"card": {"P0001"}, "pin": {strings.Repeat("9", 100)}}} {
			r := e.post(t, e.client(), "/signin", form)
			if r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusUnauthorized {
				t.Errorf("%v: status %d", form, r.Status)
			}
			if strings.Contains(r.Body, "goroutine") || !strings.Contains(r.Body, `role="alert"`) {
				t.Errorf("%v: no clear message:\n%s", form, text(r.Body))
			}
		}
	})

	t.Run("ErrThrottled", func(t *testing.T) {
		c := e.client()
		for i := 0; i < 5; i++ {
			if r := e.post(t, c, "/signin", url.Values{"card": {"P0004"}, "pin": {"000" + strconv.Itoa(i)}}); r.Status != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d", i, r.Status)
			}
		}
		// Locked: even the right PIN is refused now, without a comparison.
		r := e.post(t, c, "/signin", url.Values{"card": {"P0004"}, "pin": {"1234"}})
		if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "Too many wrong PINs for this card") {
			t.Fatalf("sixth attempt: %d\n%s", r.Status, text(r.Body))
		}
		// Another card from the same address still signs in.
		e.signIn(t, e.client(), "P0003")
		// After the lockout, the right PIN works.
		e.Clock.Advance(16 * time.Minute)
		e.signIn(t, e.client(), "P0004")
	})

	t.Run("ErrOpenRedirect", func(t *testing.T) {
		for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example"} {
			r := e.post(t, e.client(), "/signin", url.Values{"card": {"P0001"}, "pin": {"1234"}, "next": {next}})
			if r.Location != "/account" {
				t.Errorf("next=%q went to %q", next, r.Location)
			}
		}
	})

	t.Run("IdleTimeout", func(t *testing.T) {
		c := e.client()
		e.signIn(t, c, "P0001")
		e.Clock.Advance(opac.DefaultIdleTimeout + time.Minute)
		r := e.get(t, c, "/account")
		if r.Status != http.StatusSeeOther {
			t.Fatalf("after idle: %d", r.Status)
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestRenew(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	loan := e.checkout(t, "P0001", "I00001")
	other := e.checkout(t, "P0001", "I00002")
	e.signIn(t, c, "P0001")
	txt := text(e.get(t, c, "/account").Body)
	if !strings.Contains(txt, "Due back on Monday 21 December 2026") {
		t.Fatalf("My account does not say when loans are due:\n%s", txt)
	}
	id := strconv.FormatInt(loan.ID, 10)

	t.Run("OK", func(t *testing.T) {
		e.Clock.Advance(5 * 24 * time.Hour)
		e.signIn(t, c, "P0001") // signed out meanwhile: idle
		r := e.follow(t, c, e.post(t, c, "/account/renew", url.Values{"loan": {id}}))
		if !strings.Contains(text(r.Body), "is renewed: it is now due back on Monday 28 December 2026") {
			t.Errorf("renewal:\n%s", text(r.Body))
		}
	})

	// Renewing again the same day would not move the due date: refused, and
	// no renewal is used.
	t.Run("ErrSameDay", func(t *testing.T) {
		r := e.follow(t, c, e.post(t, c, "/account/renew", url.Values{"loan": {id}}))
		if !strings.Contains(text(r.Body), "could not be renewed today: it is already due back on Monday 28 December 2026") {
			t.Errorf("renewal the same day:\n%s", text(r.Body))
		}
		var renewals int
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT renewals FROM loans WHERE id = ?`, loan.ID).Scan(&renewals)
		})
		if err != nil {
			t.Fatal(err)
		}
		if renewals != 1 {
			t.Errorf("renewals %d after a refused renewal, want 1", renewals)
		}
	})

	t.Run("ErrTooMany", func(t *testing.T) {
		e.Clock.Advance(7 * 24 * time.Hour)
		e.signIn(t, c, "P0001")
		e.post(t, c, "/account/renew", url.Values{"loan": {id}}) // the second of two
		e.get(t, c, "/account")
		r := e.follow(t, c, e.post(t, c, "/account/renew", url.Values{"loan": {id}}))
		if !strings.Contains(text(r.Body), "could not be renewed: it has been renewed as many times as allowed. Please bring it back by") {
			t.Errorf("third renewal:\n%s", text(r.Body))
		}
	})

	t.Run("ErrOnHold", func(t *testing.T) {
		rec := e.recordOf(t, "I00002")
		_, err := e.Circ.PlaceHold(context.Background(), holds.PlaceRequest{Actor: e.Desk, RecordID: rec, PatronCard: "P0003", PickupBranchCode: "CEN"})
		if err != nil {
			t.Fatal(err)
		}
		r := e.follow(t, c, e.post(t, c, "/account/renew", url.Values{"loan": {strconv.FormatInt(other.ID, 10)}}))
		if !strings.Contains(text(r.Body), "could not be renewed: another reader is waiting for it.") {
			t.Errorf("renewal with a hold waiting:\n%s", text(r.Body))
		}
	})

	t.Run("RenewAll", func(t *testing.T) {
		r := e.follow(t, c, e.post(t, c, "/account/renew", url.Values{"all": {"1"}}))
		if n := strings.Count(text(r.Body), "could not be renewed"); n != 2 {
			t.Errorf("renew all: %d refusals, want 2:\n%s", n, text(r.Body))
		}
	})

	t.Run("ErrBlockedPatron", func(t *testing.T) {
		b := e.client()
		e.checkout(t, "P0003", "I00003")
		p := e.patron(t, "P0003")
		err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			return patrons.SetBlock(tx, e.Desk, p.ID, true, "Damaged two books; see the manager")
		})
		if err != nil {
			t.Fatal(err)
		}
		e.signIn(t, b, "P0003")
		txt := text(e.follow(t, b, e.post(t, b, "/account/renew", url.Values{"all": {"1"}})).Body)
		if !strings.Contains(txt, "could not be renewed: your account is blocked. Please ask at the desk.") || strings.Contains(txt, "Damaged") {
			t.Errorf("blocked patron's renewal:\n%s", txt)
		}
	})

	t.Run("ErrBadInput", func(t *testing.T) {
		for _, v := range []string{"abc", "-1", "0", "99999999999999999999"} {
			r := e.post(t, c, "/account/renew", url.Values{"loan": {v}})
			if r.Status != http.StatusNotFound || strings.Contains(r.Body, "goroutine") {
				t.Errorf("loan=%q: %d", v, r.Status)
			}
		}
	})
}

func TestHolds(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.checkout(t, "P0001", "I00010")
	rec := strconv.FormatInt(e.recordOf(t, "I00010"), 10)
	e.signIn(t, c, "P0003")

	t.Run("Place", func(t *testing.T) {
		r := e.get(t, c, "/records/"+rec+"/hold")
		if r.Status != http.StatusOK || !strings.Contains(r.Body, `<option value="CEN" selected>Central</option>`) {
			t.Fatalf("hold form: %d, home branch not chosen\n%s", r.Status, r.Body)
		}
		r = e.follow(t, c, e.post(t, c, "/records/"+rec+"/hold", url.Values{"pickup": {"CEN"}}))
		txt := text(r.Body)
		if !strings.Contains(txt, "Hold placed: The Left Hand of Darkness, to pick up at Central. You are number 1 in the queue.") ||
			!strings.Contains(txt, "Number 1 in the queue, to pick up at Central.") {
			t.Errorf("after placing:\n%s", txt)
		}
	})

	t.Run("ErrTwice", func(t *testing.T) {
		r := e.post(t, c, "/records/"+rec+"/hold", url.Values{"pickup": {"CEN"}})
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "You already have a hold on this title.") {
			t.Errorf("second hold: %d\n%s", r.Status, text(r.Body))
		}
		r = e.post(t, c, "/records/"+rec+"/hold", url.Values{"pickup": {"NOPE"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Choose the library") {
			t.Errorf("unknown pickup: %d\n%s", r.Status, text(r.Body))
		}
	})

	t.Run("ErrHasCopy", func(t *testing.T) {
		e.checkout(t, "P0003", "I00005")
		r := e.post(t, c, "/records/"+strconv.FormatInt(e.recordOf(t, "I00005"), 10)+"/hold", url.Values{"pickup": {"CEN"}})
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "You have a copy of this title on loan already.") {
			t.Errorf("hold on a title on loan to the patron: %d\n%s", r.Status, text(r.Body))
		}
	})

	hold := e.openHold(t, "P0003", rec)
	path := "/account/holds/" + strconv.FormatInt(hold, 10)

	t.Run("ChangePickup", func(t *testing.T) {
		txt := text(e.follow(t, c, e.post(t, c, path+"/pickup", url.Values{"pickup": {"EAS"}})).Body)
		if !strings.Contains(txt, "You will pick up The Left Hand of Darkness at Eastside.") || !strings.Contains(txt, "to pick up at Eastside") {
			t.Errorf("change pickup:\n%s", txt)
		}
		r := e.follow(t, c, e.post(t, c, path+"/pickup", url.Values{"pickup": {"XX"}}))
		if !strings.Contains(text(r.Body), "Choose the library where you will pick up The Left Hand of Darkness from the list.") {
			t.Errorf("unknown branch:\n%s", text(r.Body))
		}
		e.post(t, c, path+"/pickup", url.Values{"pickup": {"CEN"}})
	})

	t.Run("Suspend", func(t *testing.T) {
		for _, bad := range []string{"", "2026-11-30", "tomorrow", "2026-13-45"} {
			txt := text(e.follow(t, c, e.post(t, c, path+"/suspend", url.Values{"until": {bad}})).Body)
			if !strings.Contains(txt, "choose the day it should start again") {
				t.Errorf("until=%q:\n%s", bad, txt)
			}
		}
		txt := text(e.follow(t, c, e.post(t, c, path+"/suspend", url.Values{"until": {"2026-12-15"}})).Body)
		if !strings.Contains(txt, "is paused until Tuesday 15 December 2026") || !strings.Contains(txt, "Resume now") {
			t.Errorf("suspend:\n%s", txt)
		}
		txt = text(e.follow(t, c, e.post(t, c, path+"/resume", nil)).Body)
		if !strings.Contains(txt, "is active again") {
			t.Errorf("resume:\n%s", txt)
		}
	})

	t.Run("TrappedAtTheDesk", func(t *testing.T) {
		res, err := e.Circ.Checkin(context.Background(), circulation.CheckinRequest{Actor: e.Desk, Barcode: "I00010"})
		if err != nil || res.Hold == nil {
			t.Fatalf("check in: %v, hold %v", err, res.Hold)
		}
		txt := text(e.get(t, c, "/account").Body)
		if !strings.Contains(txt, "Ready for you at Central until") {
			t.Errorf("trapped hold:\n%s", txt)
		}
		txt = text(e.follow(t, c, e.post(t, c, path+"/pickup", url.Values{"pickup": {"EAS"}})).Body)
		if !strings.Contains(txt, "already set aside for you at Central") {
			t.Errorf("pickup change of a trapped hold:\n%s", txt)
		}
	})

	t.Run("CancelAsksFirst", func(t *testing.T) {
		if body := e.get(t, c, "/account").Body; !strings.Contains(body, `<a class="button secondary" href="`+path+`/cancel" aria-label="Cancel hold on The Left Hand of Darkness">Cancel hold</a>`) {
			t.Errorf("My account has no Cancel hold link to the question:\n%s", text(body))
		}
		// The link, and a post without the answer (a page from before), ask.
		for _, r := range []response{e.get(t, c, path+"/cancel"), e.post(t, c, path+"/cancel", nil), e.post(t, c, path+"/cancel", url.Values{"confirm": {"no"}})} {
			txt := text(r.Body)
			if r.Status != http.StatusOK || !strings.Contains(txt, "Cancel your hold on The Left Hand of Darkness?") ||
				!strings.Contains(txt, "A copy is set aside for you at Central until") || !strings.Contains(txt, "Yes, cancel the hold") || !strings.Contains(txt, "Keep the hold") {
				t.Errorf("the question: %d\n%s", r.Status, txt)
			}
			if !strings.Contains(r.Body, `<input type="hidden" name="confirm" value="yes">`) || !strings.Contains(r.Body, `<a class="button secondary" href="/account">Keep the hold</a>`) {
				t.Errorf("the question's form:\n%s", r.Body)
			}
		}
		if status := e.holdStatus(t, path); status != holds.StatusWaiting {
			t.Fatalf("asking cancelled the hold: %s", status)
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		txt := text(e.follow(t, c, e.post(t, c, path+"/cancel", url.Values{"confirm": {"yes"}})).Body)
		if !strings.Contains(txt, "Your hold on The Left Hand of Darkness is cancelled.") || !strings.Contains(txt, "You have no holds.") {
			t.Errorf("cancel:\n%s", txt)
		}
		if status := e.holdStatus(t, path); status != holds.StatusCancelled {
			t.Errorf("hold %s after Yes, cancel the hold", status)
		}
		r := e.post(t, c, path+"/cancel", url.Values{"confirm": {"yes"}})
		if r.Status != http.StatusConflict {
			t.Errorf("cancel again: %d", r.Status)
		}
		if r := e.get(t, c, path+"/cancel"); r.Status != http.StatusConflict {
			t.Errorf("ask again: %d", r.Status)
		}
	})

	t.Run("ErrExpiredCard", func(t *testing.T) {
		x := e.client()
		e.signIn(t, x, "P0004")
		r := e.post(t, x, "/records/"+rec+"/hold", url.Values{"pickup": {"CEN"}})
		if r.Status != http.StatusConflict || !strings.Contains(text(r.Body), "Your card expired on") {
			t.Errorf("expired card: %d\n%s", r.Status, text(r.Body))
		}
	})
}

// openHold returns the id of the patron's open hold on the record.
func (e *testEnv) openHold(t testing.TB, card, record string) int64 {
	t.Helper()
	var id int64
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT h.id FROM holds h JOIN patrons p ON p.id = h.patron_id
			WHERE p.card = ? AND h.record_id = ? AND h.status IN ('queued', 'in_transit', 'waiting')`, card, record).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestPINChange(t *testing.T) {
	e := newEnv(t)
	c, elsewhere := e.client(), e.client()
	e.signIn(t, c, "P0001")
	e.signIn(t, elsewhere, "P0001")
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
	}{
		{"ErrWrongCurrent", url.Values{"current": {"0000"}, "new": {"5678"}, "confirm": {"5678"}}, "pin-current-error"},
		{"ErrMismatch", url.Values{"current": {"1234"}, "new": {"5678"}, "confirm": {"5679"}}, "pin-confirm-error"},
		{"ErrTooShort", url.Values{"current": {"1234"}, "new": {"12"}, "confirm": {"12"}}, "pin-new-error"},
		{"ErrSpaces", url.Values{"current": {"1234"}, "new": {"12 34"}, "confirm": {"12 34"}}, "pin-new-error"},
		{"ErrSame", url.Values{"current": {"1234"}, "new": {"1234"}, "confirm": {"1234"}}, "pin-new-error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, c, "/account/pin", tc.form)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `id="`+tc.field+`"`) {
				t.Errorf("%d, want 422 with %s\n%s", r.Status, tc.field, text(r.Body))
			}
		})
	}
	t.Run("ErrWrongCurrentNotHashed", func(t *testing.T) {
		// The current PIN is checked before the new one is hashed: a wrong
		// guess costs the server a comparison, never a hash too.
		before := passwords.Hashes()
		r := e.post(t, c, "/account/pin", url.Values{"current": {"0001"}, "new": {"5678"}, "confirm": {"5678"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("wrong current PIN: %d", r.Status)
		}
		if n := passwords.Hashes() - before; n != 0 {
			t.Errorf("a wrong current PIN made %d hashes of the new one", n)
		}
	})
	t.Run("OK", func(t *testing.T) {
		before := passwords.Hashes()
		defer func() {
			// The new PIN is hashed on the bounded pool, once.
			if n := passwords.Hashes() - before; n != 1 {
				t.Errorf("a PIN change made %d hashes on the pool, want 1", n)
			}
		}()
		r := e.follow(t, c, e.post(t, c, "/account/pin", url.Values{"current": {"1234"}, "new": {"5678"}, "confirm": {"5678"}}))
		if !strings.Contains(text(r.Body), "Your PIN is changed.") {
			t.Fatalf("PIN change:\n%s", text(r.Body))
		}
		if r := e.get(t, elsewhere, "/account"); r.Status != http.StatusSeeOther {
			t.Errorf("the other session survived the PIN change: %d", r.Status)
		}
		if r := e.post(t, e.client(), "/signin", url.Values{"card": {"P0001"}, "pin": {"1234"}}); r.Status != http.StatusUnauthorized {
			t.Errorf("old PIN: %d", r.Status)
		}
		if r := e.post(t, e.client(), "/signin", url.Values{"card": {"P0001"}, "pin": {"5678"}}); r.Status != http.StatusSeeOther {
			t.Errorf("new PIN: %d", r.Status)
		}
	})
}

func TestFines(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0002")
	txt := text(e.get(t, c, "/account").Body)
	if !strings.Contains(txt, "You owe 12.50") {
		t.Errorf("My account of a patron with fines:\n%s", txt)
	}
	r := e.get(t, c, "/account/fines")
	txt = text(r.Body)
	if r.Status != http.StatusOK || !strings.Contains(txt, "Overdue fine") || !strings.Contains(txt, "You owe 12.50") {
		t.Errorf("fines page: %d\n%s", r.Status, txt)
	}
	if strings.Count(r.Body, "<form") != 1 || !strings.Contains(r.Body, `action="/signout"`) {
		t.Error("the fines page offers a payment form: fines are view only")
	}
}

func TestSessionCookie(t *testing.T) {
	e := newEnv(t)
	for _, secure := range []bool{false, true} {
		t.Run("Secure="+strconv.FormatBool(secure), func(t *testing.T) {
			srv := httptest.NewServer(opac.New(opac.Config{DB: e.DB, SecureCookies: secure}))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/signin", strings.NewReader(url.Values{"card": {"P0001"}, "pin": {"1234"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r := do(t, e.client(), req)
			if r.Status != http.StatusSeeOther {
				t.Fatalf("sign in: %d", r.Status)
			}
			var cookie string
			for _, h := range r.Header.Values("Set-Cookie") {
				if strings.HasPrefix(h, opac.CookieName+"=") {
					cookie = h
				}
			}
			lower := strings.ToLower(cookie)
			switch {
			case cookie == "":
				t.Fatal("no session cookie set")
			case strings.Contains(lower, "max-age") || strings.Contains(lower, "expires"):
				t.Errorf("the session cookie outlives the browser: %s", cookie)
			case !strings.Contains(lower, "; httponly"):
				t.Errorf("not HttpOnly: %s", cookie)
			case !strings.Contains(lower, "; samesite=lax"):
				t.Errorf("not SameSite=Lax: %s", cookie)
			case strings.Contains(lower, "; secure") != secure:
				t.Errorf("Secure is not %v: %s", secure, cookie)
			}
		})
	}
}

// signInVia posts a sign-in to srv with the given X-Forwarded-For ("" for none).
func signInVia(t *testing.T, srv *httptest.Server, card, pin, xff string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/signin", strings.NewReader(url.Values{"card": {card}, "pin": {pin}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	jar, _ := cookiejar.New(nil)
	return do(t, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, req)
}

// TestTrustedProxy: the address a sign-in is counted under. Twenty wrong PINs
// from one address lock that address.
func TestTrustedProxy(t *testing.T) {
	t.Run("HeaderIgnoredWithoutSetting", func(t *testing.T) {
		e := newEnv(t)
		srv := httptest.NewServer(opac.New(opac.Config{DB: e.DB}))
		defer srv.Close()
		for i := range 20 {
			// A client cannot escape the lock by making up a header.
			signInVia(t, srv, "NOCARD"+strconv.Itoa(i), "0000", "198.51.100."+strconv.Itoa(i))
		}
		r := signInVia(t, srv, "P0001", "1234", "198.51.100.99")
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("after 20 wrong PINs from one address with made-up headers: %d, want 429", r.Status)
		}
	})
	t.Run("ForwardedClientsCountedApart", func(t *testing.T) {
		e := newEnv(t)
		proxies, err := opac.ParseTrustedProxies("127.0.0.1, 10.0.0.0/8")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(opac.New(opac.Config{DB: e.DB, TrustedProxies: proxies}))
		defer srv.Close()
		for i := range 20 {
			// The guesser's own header to the left of what the proxies wrote is
			// not believed: the last untrusted hop is 203.0.113.1.
			signInVia(t, srv, "NOCARD"+strconv.Itoa(i), "0000", "192.0.2."+strconv.Itoa(i)+", 203.0.113.1, 10.1.2.3")
		}
		if r := signInVia(t, srv, "P0001", "1234", "203.0.113.1"); r.Status != http.StatusTooManyRequests {
			t.Errorf("the guessing client: %d, want 429", r.Status)
		}
		if r := signInVia(t, srv, "P0001", "1234", "203.0.113.2, 10.1.2.3"); r.Status != http.StatusSeeOther {
			t.Errorf("another patron behind the same proxy: %d, want 303\n%s", r.Status, text(r.Body))
		}
	})
	t.Run("ErrParse", func(t *testing.T) {
		if _, err := opac.ParseTrustedProxies("10.0.0.0/8, proxy.example"); err == nil {
			t.Error("a host name was accepted as a trusted proxy")
		}
	})
}

// TestPINChangeEndsSessions: a session signed in under an old PIN ends, even
// if it was written back after the change (a request in flight from another
// device), and a PIN set at the desk ends the patron's sessions too.
func TestPINChangeEndsSessions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t.Run("WrittenBack", func(t *testing.T) {
		c, elsewhere := e.client(), e.client()
		e.signIn(t, c, "P0001")
		e.signIn(t, elsewhere, "P0001")
		var rows [][]any
		err := e.DB.Read(ctx, func(tx *db.Tx) error {
			rs, err := tx.Query(`SELECT token_hash, data, expiry FROM opac_sessions`)
			if err != nil {
				return err
			}
			defer rs.Close()
			for rs.Next() {
				var h, exp string
				var data []byte
				if err := rs.Scan(&h, &data, &exp); err != nil {
					return err
				}
				rows = append(rows, []any{h, data, exp})
			}
			return rs.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		r := e.post(t, c, "/account/pin", url.Values{"current": {"1234"}, "new": {"5678"}, "confirm": {"5678"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("PIN change: %d\n%s", r.Status, text(r.Body))
		}
		// The other device's request, in flight during the change, saves its
		// session as it was.
		err = e.DB.Write(ctx, func(tx *db.Tx) error {
			for _, row := range rows {
				if _, err := tx.Exec(`INSERT INTO opac_sessions (token_hash, data, expiry) VALUES (?, ?, ?)
					ON CONFLICT (token_hash) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`, row...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.get(t, elsewhere, "/account"); r.Status != http.StatusSeeOther {
			t.Errorf("the session written back after the PIN change still works: %d", r.Status)
		}
		if r := e.get(t, c, "/account"); r.Status != http.StatusOK {
			t.Errorf("the session that changed the PIN was ended: %d", r.Status)
		}
	})
	t.Run("AtTheDesk", func(t *testing.T) {
		c := e.client()
		e.signIn(t, c, "P0002")
		p := e.patron(t, "P0002")
		hash, err := patrons.HashPIN("4321")
		if err != nil {
			t.Fatal(err)
		}
		if err := patrons.NewService(e.DB).SetPIN(ctx, e.Desk, p.ID, hash); err != nil {
			t.Fatal(err)
		}
		r := e.get(t, c, "/account")
		if r.Status != http.StatusSeeOther {
			t.Fatalf("a session signed in under the old PIN: %d", r.Status)
		}
		if txt := text(e.get(t, c, "/signin").Body); !strings.Contains(txt, "Your PIN was changed, so you were signed out.") {
			t.Errorf("no word of why:\n%s", txt)
		}
	})
}

// TestSignInRenewsToken: the session token changes at sign-in (session
// fixation: a token planted before sign-in, or a previous patron's on a shared
// computer, never becomes a signed-in session).
func TestSignInRenewsToken(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	token := func() string {
		for _, ck := range c.Jar.Cookies(mustURL(e.Srv.URL)) {
			if ck.Name == opac.CookieName {
				return ck.Value
			}
		}
		return ""
	}
	// An anonymous session (signing out leaves one, holding its flash): the
	// kind of token an attacker could plant on a shared computer.
	e.signIn(t, c, "P0003")
	e.post(t, c, "/signout", nil)
	anonymous := token()
	e.signIn(t, c, "P0001")
	first := token()
	if anonymous == "" || anonymous == first {
		t.Errorf("the anonymous session's token %q was kept at sign-in", anonymous)
	}
	e.signIn(t, c, "P0002")
	second := token()
	if first == "" || second == "" || first == second {
		t.Errorf("the token was not renewed at sign-in: %q then %q", first, second)
	}
	// The first token no longer names a session.
	old := e.client()
	old.Jar.SetCookies(mustURL(e.Srv.URL), []*http.Cookie{{Name: opac.CookieName, Value: first}})
	if r := e.get(t, old, "/account"); r.Status != http.StatusSeeOther {
		t.Errorf("the token from before the second sign-in still works: %d", r.Status)
	}
}

// TestSecurityHeaders: the patrons' site's policy forbids script and framing.
func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/", "/search?q=dune", "/signin", "/oai?verb=Identify", "/no-such-page"} {
		r := e.get(t, e.client(), path)
		h := r.Header
		if got := h.Get("Content-Security-Policy"); got != "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'" {
			t.Errorf("%s: Content-Security-Policy %q", path, got)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
}

// TestHoldRefusalsWorded: the desk's refusals reach patrons in their words,
// by reason, never with staff wording (hold ids, "patron page", staff notes).
func TestHoldRefusalsWorded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var rec int64
	if err := e.DB.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM records ORDER BY id DESC LIMIT 1 OFFSET 3`).Scan(&rec)
	}); err != nil {
		t.Fatal(err)
	}
	recPath := "/records/" + strconv.FormatInt(rec, 10) + "/hold"
	p := e.patron(t, "P0001")

	t.Run("Blocked", func(t *testing.T) {
		// Blocked at the desk after signing in: the staff's note is not shown.
		c := e.client()
		e.signIn(t, c, "P0001")
		err := e.DB.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE patrons SET blocked = 1, block_note = 'Staff only: owes a laptop' WHERE id = ?`, p.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer e.DB.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE patrons SET blocked = 0, block_note = '' WHERE id = ?`, p.ID)
			return err
		})
		r := e.post(t, c, recPath, url.Values{"pickup": {"CEN"}})
		txt := text(r.Body)
		if r.Status != http.StatusConflict || !strings.Contains(txt, "Your account is blocked") || strings.Contains(txt, "owes a laptop") {
			t.Errorf("blocked: %d\n%s", r.Status, txt)
		}
	})
	t.Run("HoldGoneMeanwhile", func(t *testing.T) {
		c := e.client()
		e.signIn(t, c, "P0002")
		r := e.post(t, c, recPath, url.Values{"pickup": {"CEN"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("place: %d\n%s", r.Status, text(r.Body))
		}
		id := e.openHold(t, "P0002", strconv.FormatInt(rec, 10))
		// Cancelled at the desk while the patron's page was open; the patron
		// then asks to resume it: the conflict is worded by title, not id.
		if _, err := e.Circ.CancelHold(ctx, e.Desk, id, "patron phoned"); err != nil {
			t.Fatal(err)
		}
		r = e.post(t, c, "/account/holds/"+strconv.FormatInt(id, 10)+"/resume", nil)
		txt := text(r.Body)
		if strings.Contains(txt, "Hold "+strconv.FormatInt(id, 10)) {
			t.Errorf("a hold id in the patron's message:\n%s", txt)
		}
		if r.Status == http.StatusSeeOther {
			txt = text(e.follow(t, c, r).Body)
		}
		if !strings.Contains(txt, "no longer open") && !strings.Contains(txt, "meanwhile") {
			t.Errorf("no word of the hold being gone: %d\n%s", r.Status, txt)
		}
	})
}

// holdStatus reads the status of the hold at path (/account/holds/{id}) in the
// database.
func (e *testEnv) holdStatus(t testing.TB, path string) string {
	t.Helper()
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/account/holds/"), 10, 64)
	if err != nil {
		t.Fatalf("hold path %q: %v", path, err)
	}
	var status string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT status FROM holds WHERE id = ?`, id).Scan(&status)
	}); err != nil {
		t.Fatal(err)
	}
	return status
}
