package opac

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/kit"
)

// ParseTrustedProxies parses a comma-separated list of addresses and CIDRs
// ("127.0.0.1, 10.0.0.0/8") for Config.TrustedProxies; "" is none.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR, such as 127.0.0.1 or 10.0.0.0/8", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the address a sign-in attempt is counted under: the
// connection's, or, when that is a trusted proxy, the last address in
// X-Forwarded-For that is not a trusted proxy (addresses to its left were
// written by the client and prove nothing).
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	remote, err := netip.ParseAddr(host)
	if err != nil || len(s.cfg.TrustedProxies) == 0 || !s.trusted(remote) {
		return host
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	client := remote
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			// Not an address where a trusted proxy should have written one:
			// count the attempt under the last trusted hop.
			break
		}
		client = a.Unmap()
		if !s.trusted(client) {
			break
		}
	}
	return client.String()
}

func (s *Server) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if patronFrom(r.Context()) != nil {
		redirect(w, r, next, http.StatusSeeOther)
		return
	}
	s.Render(w, r, http.StatusOK, SignInPage(s.page(r, "Sign in", "signin"), SignInForm{Next: next}))
}

// handleSignIn checks the card and PIN (patrons.SignIn: counted, throttled, the
// same answer for an unknown card and a wrong PIN) and starts a session under a
// new token.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	f := SignInForm{Card: r.PostForm.Get("card"), Next: localPath(r.PostForm.Get("next"))}
	if len(f.Card) > 64 || !utf8.ValidString(f.Card) {
		f.Card = "" // not a card: not shown back
	}
	in, err := s.SignIn.AuthenticatePatron(r.Context(), r.PostForm.Get("card"), r.PostForm.Get("pin"), s.clientAddr(r))
	if err != nil {
		code := stacks.ErrorCode(err)
		if code == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		f.Error = stacks.ErrorMessage(err)
		s.Render(w, r, kit.CodeStatus(code), SignInPage(s.page(r, "Sign in", "signin"), f))
		return
	}
	// A new token at sign-in defeats session fixation.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Put(r.Context(), sessPatronID, in.ID)
	s.Sessions.Put(r.Context(), sessPINGen, in.PINGeneration)
	s.Sessions.Put(r.Context(), sessSeen, s.DB.Now().Unix())
	redirect(w, r, f.Next, http.StatusSeeOther)
}

func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	if s.Sessions.GetInt64(r.Context(), sessPatronID) == 0 {
		redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if err := s.Sessions.Destroy(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "You have signed out. On a shared computer, close the browser too.")
	redirect(w, r, "/", http.StatusSeeOther)
}
