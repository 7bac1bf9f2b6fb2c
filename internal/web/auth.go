package web

import (
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"
)

// hostRule is what the Host header of a request may name: the listening
// port, and a host among names or, for a server listening on every
// address, any IP address. A name an attacker's DNS can point at this
// machine (DNS rebinding) is never accepted unless it was the --addr.
type hostRule struct {
	port  string
	names map[string]bool     // lower-case host names
	ips   map[netip.Addr]bool // IP addresses
	anyIP bool                // listening on 0.0.0.0 or [::]
}

// allowedHosts derives the rule for a server listening at listen (an
// IP:port) as asked for by requested (the --addr: a host or IP and port,
// or only a port).
func allowedHosts(listen, requested string) (hostRule, error) {
	lhost, port, err := net.SplitHostPort(listen)
	if err != nil {
		return hostRule{}, fmt.Errorf("listening address %q: %w", listen, err)
	}
	rule := hostRule{port: port, names: map[string]bool{}, ips: map[netip.Addr]bool{}}
	loopback := func() {
		rule.names["localhost"] = true
		rule.ips[netip.MustParseAddr("127.0.0.1")] = true
		rule.ips[netip.IPv6Loopback()] = true
	}
	if ip, err := netip.ParseAddr(lhost); err == nil {
		ip = ip.Unmap()
		switch {
		case ip.IsUnspecified():
			rule.anyIP = true
			loopback()
		case ip.IsLoopback():
			rule.ips[ip] = true
			loopback()
		default:
			rule.ips[ip] = true
		}
	}
	rhost := requested
	if h, _, err := net.SplitHostPort(requested); err == nil {
		rhost = h
	}
	if rhost != "" {
		if ip, err := netip.ParseAddr(rhost); err == nil {
			rule.ips[ip.Unmap()] = true
		} else {
			rule.names[strings.ToLower(rhost)] = true
		}
	}
	return rule, nil
}

// allows reports whether a request's Host header names this server.
func (h hostRule) allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		// No port: the scheme's default.
		host, port = hostHeader, "80"
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
	}
	if port != h.port || host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return false
		}
		ip = ip.Unmap()
		return h.anyIP || h.ips[ip]
	}
	return h.names[strings.ToLower(host)]
}

// How a request proved it holds the token.
const (
	authNone   = ""
	authBearer = "bearer" // Authorization: Bearer TOKEN (scripts)
	authCookie = "cookie" // the cookie set for the browser
	authQuery  = "query"  // ?token=TOKEN in the URL printed at start
)

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// authenticate says how r carries the token, if it does. A request with an
// Authorization header is judged by it alone.
func (s *Server) authenticate(r *http.Request, cookie string) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") && s.validToken(strings.TrimSpace(tok)) {
			return authBearer
		}
		return authNone
	}
	if c, err := r.Cookie(cookie); err == nil && s.validToken(c.Value) {
		return authCookie
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if q := r.URL.Query().Get("token"); q != "" && s.validToken(q) {
			return authQuery
		}
	}
	return authNone
}

// guard applies the rules every request passes before any handler: the
// token, the Host header, CSRF for forms posted with the cookie, and the
// security headers of every answer.
func (s *Server) guard(hosts hostRule, cookie string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		// The first URL carries the token: never send it elsewhere.
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		api := strings.HasPrefix(r.URL.Path, "/api/")
		// Everything here is decided from the request's line and headers,
		// before any of its body is read: a refusal goes out at once and
		// ends the connection, instead of waiting for a body that a client
		// without the token may announce and never send.
		refuse := func(status int, msg string) {
			pending := r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
			if pending {
				hd.Set("Connection", "close")
			}
			s.fail(w, r, status, msg)
			if pending {
				// The server would read what is left of the body before
				// closing the connection: there is nothing left to read.
				_ = http.NewResponseController(w).SetReadDeadline(time.Now())
			}
		}

		how := s.authenticate(r, cookie)
		if how == authNone {
			if api {
				hd.Set("WWW-Authenticate", `Bearer realm="azero"`)
			}
			refuse(http.StatusUnauthorized, "this page needs azero serve's token: open the URL it printed (…/?token=TOKEN), or send Authorization: Bearer TOKEN")
			return
		}
		if !hosts.allows(r.Host) {
			refuse(http.StatusForbidden, fmt.Sprintf("the Host header %q does not name this server: use the address azero serve printed", r.Host))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.ContentLength > MaxBody {
				refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is larger than %d bytes", MaxBody))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
			if how == authCookie {
				// Browsers say where a request comes from. (With our
				// Referrer-Policy a form's Origin is "null"; the CSRF
				// token below still decides.)
				site := r.Header.Get("Sec-Fetch-Site")
				o := r.Header.Get("Origin")
				if site == "cross-site" || site == "same-site" || o != "" && o != "null" && o != "http://"+r.Host {
					refuse(http.StatusForbidden, "the request comes from another site")
					return
				}
				// The form field is read from a body already bounded.
				tok := r.Header.Get("X-CSRF-Token")
				if tok == "" {
					tok = r.PostFormValue("csrf")
				}
				if subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) != 1 {
					refuse(http.StatusForbidden, "the form lacks its CSRF token: reload the page and answer again")
					return
				}
			}
		}
		if how == authQuery && !api {
			// The browser keeps the token in a cookie it will not send
			// from other sites or show to scripts, and the URL loses it.
			http.SetCookie(w, &http.Cookie{Name: cookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			to := withoutToken(r.URL)
			if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
				// Opened from a link on another site: a redirect would
				// carry that site along, and the browser would not send a
				// SameSite=Strict cookie with it. A page of this server
				// sends the browser on instead.
				var b strings.Builder
				if err := s.pages.ExecuteTemplate(&b, "continue", to); err == nil {
					hd.Set("Content-Type", "text/html; charset=utf-8")
					_, _ = io.WriteString(w, b.String())
					return
				}
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withoutToken is the address of the page u asks for, without the token:
// a path on this server (a request for //host/ would otherwise send the
// browser to that host) and the rest of the query.
func withoutToken(u *url.URL) string {
	p := path.Clean("/" + u.Path)
	if strings.HasSuffix(u.Path, "/") && p != "/" {
		p += "/"
	}
	q := u.Query()
	q.Del("token")
	out := (&url.URL{Path: p, RawQuery: q.Encode()}).RequestURI()
	if strings.HasPrefix(out, "//") {
		return "/"
	}
	return out
}
