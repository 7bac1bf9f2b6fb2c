package web

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/review"
)

// joined is the report a classification gives back.
func joined(lines []review.ReportLine) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		var b strings.Builder
		for _, s := range l.Spans {
			b.WriteString(s.Text)
		}
		out[i] = b.String()
	}
	return strings.Join(out, "\n")
}

// bannerRule frames a warning banner in review's reports.
var bannerRule = strings.Repeat("!", 78)

func TestClassifyReport(t *testing.T) {
	t.Parallel()
	report := " a.go | 3 ++-\n 1 file changed\n\n1 file flagged for review:\n  REPLACED a.go\n\n" + bannerRule +
		"\n!! WARNING: REPLACED: a.go\n!! before: 3 lines\n" + bannerRule + "\ndiff --git a/a.go b/a.go\n@@ -1 +1 @@\n-old\n+new\n ctx\n... truncated: 9 more lines\n"
	got := classifyReport(report, true)
	want := []string{"stat", "stat", "", "heading", "flagged", "", "rule", "warning", "banner", "rule", "file", "hunk", "del", "add", "", "truncated"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Class != w {
			t.Errorf("line %d %q: class %q, want %q", i, joined(got[i:i+1]), got[i].Class, w)
		}
	}
	if bar := got[0].Spans; len(bar) != 3 || bar[1].Class != "add" || bar[1].Text != "++" || bar[2].Class != "del" || bar[2].Text != "-" {
		t.Errorf("stat bar %+v", bar)
	}
	for _, l := range classifyReport(report, false) {
		if l.Class != "" || len(l.Spans) != 1 || l.Spans[0].Class != "" {
			t.Errorf("plain text classed: %+v", l)
		}
	}
}

// FuzzClassifyReport: any text is classified without loss: the spans
// give the report back (less its final newlines).
func FuzzClassifyReport(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n",
		" a.go | 3 ++-\n\n+x\n-y\n",
		" x | 1 +\n",
		"  NEW      b.txt\n",
		"!! WARNING: DELETED: c\n" + bannerRule,
		"diff --git a/x b/x\n@@ -1 +1 @@\n",
		" weird | 12 +-+-\n",
		" | 0 \n",
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, report string, diff bool) {
		lines := classifyReport(report, diff)
		if got, want := joined(lines), strings.TrimRight(report, "\n"); got != want {
			t.Fatalf("classified %q back as %q", want, got)
		}
	})
}

func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, listen, requested string
		allow, deny             []string
	}{
		{"loopback", "127.0.0.1:7077", "127.0.0.1:7077",
			[]string{"127.0.0.1:7077", "localhost:7077", "[::1]:7077", "Localhost:7077"},
			[]string{"127.0.0.2:7077", "evil.example:7077", "localhost:7078", "localhost", "192.168.1.2:7077", "[::1%eth0]:7077", "127.0.0.1:7077:1"}},
		{"a free port", "127.0.0.1:41234", "127.0.0.1:0", []string{"127.0.0.1:41234"}, []string{"127.0.0.1:0"}},
		{"localhost by name", "127.0.0.1:7077", "localhost:7077", []string{"localhost:7077", "127.0.0.1:7077"}, []string{"evil.example:7077"}},
		{"ipv6 loopback", "[::1]:7077", "[::1]:7077", []string{"[::1]:7077", "localhost:7077", "127.0.0.1:7077"}, []string{"[::2]:7077"}},
		{"every address", "0.0.0.0:7077", "0.0.0.0:7077", []string{"192.168.1.2:7077", "10.1.2.3:7077", "localhost:7077", "[fe80::1]:7077"},
			[]string{"evil.example:7077", "rebind.attacker.example:7077", "192.168.1.2:80"}},
		{"a named host", "192.168.1.2:7077", "build-box.lan:7077", []string{"build-box.lan:7077", "192.168.1.2:7077"},
			[]string{"localhost:7077", "127.0.0.1:7077", "other.lan:7077"}},
		{"port 80", "127.0.0.1:80", "127.0.0.1:80", []string{"127.0.0.1", "127.0.0.1:80", "localhost", "[::1]"}, []string{"127.0.0.1:8080"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rule, err := allowedHosts(tt.listen, tt.requested)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tt.allow {
				if !rule.allows(h) {
					t.Errorf("Host %q refused", h)
				}
			}
			for _, h := range tt.deny {
				if rule.allows(h) {
					t.Errorf("Host %q allowed", h)
				}
			}
		})
	}
}

// FuzzHostHeader: for a loopback server, a Host header is allowed only
// when it names a loopback address or localhost, with the port.
func FuzzHostHeader(f *testing.F) {
	for _, seed := range []string{"127.0.0.1:7077", "localhost:7077", "[::1]:7077", "evil:7077", "", ":", "[", "[::1", "127.0.0.1:7077x",
		"LOCALHOST:7077", "127.1:7077", "0x7f.1:7077", "[::ffff:127.0.0.1]:7077", "localhost.:7077"} {
		f.Add(seed)
	}
	rule, err := allowedHosts("127.0.0.1:7077", "127.0.0.1:7077")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if !rule.allows(host) {
			return
		}
		h, port, err := net.SplitHostPort(host)
		if err != nil || port != "7077" {
			t.Fatalf("allowed %q without the port", host)
		}
		if strings.EqualFold(h, "localhost") {
			return
		}
		ip, err := netip.ParseAddr(h)
		if err != nil || !ip.Unmap().IsLoopback() {
			t.Fatalf("allowed %q, which is not this machine", host)
		}
	})
}

func TestWithoutToken(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]string{
		"/?token=T":                    "/",
		"/runs/r1?token=T&x=1":         "/runs/r1?x=1",
		"/runs/r1/diff?x=1&token=T":    "/runs/r1/diff?x=1",
		"/gates?token=T&token=U":       "/gates",
		"//evil.example/?token=T":      "/evil.example/",
		"///evil.example?token=T":      "/evil.example",
		"/./../evil.example/?token=T":  "/evil.example/",
		"/%2F%2Fevil.example/?token=T": "/evil.example/",
		"/%5Cevil.example?token=T":     "/%5Cevil.example",
		"/runs/r1/lineage/a b?token=T": "/runs/r1/lineage/a%20b",
		"/runs/r1/../../gates?token=T": "/gates",
	} {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatal(err)
		}
		if got := withoutToken(u); got != want {
			t.Errorf("withoutToken(%s) = %s, want %s", target, got, want)
		}
	}
}

// FuzzWithoutToken: the page a browser is sent to after giving the token
// is on this server (a path from /, never //host or /\host) and has no
// token in its query.
func FuzzWithoutToken(f *testing.F) {
	for _, seed := range []string{"/?token=T", "//evil/?token=T", "/\\evil?token=T", "/a/../..//b?x=1&token=T", "/%2f%2fevil?token=T", "/?token=T&token=T"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Scheme != "" || u.Host != "" {
			return
		}
		got := withoutToken(u)
		back, err := url.ParseRequestURI(got)
		if err != nil {
			t.Fatalf("withoutToken(%q) = %q: %v", target, got, err)
		}
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.HasPrefix(got, "/\\") || back.Host != "" {
			t.Fatalf("withoutToken(%q) = %q leads off this server", target, got)
		}
		if back.Query().Has("token") {
			t.Fatalf("withoutToken(%q) = %q keeps the token", target, got)
		}
	})
}

// BenchmarkClassifyReport classifies the report of a large change (a
// diff of 20,000 lines), as a page showing it does.
func BenchmarkClassifyReport(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(" big.go | 20000 " + strings.Repeat("+", 20) + strings.Repeat("-", 20) + "\n 1 file changed\n\n")
	sb.WriteString("diff --git a/big.go b/big.go\n@@ -1,10000 +1,10000 @@\n")
	for i := range 10000 {
		sb.WriteString("-old line " + strings.Repeat("x", i%60) + "\n+new line\n")
	}
	report := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		classifyReport(report, true)
	}
}
