package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzParseSpec: accepted names round-trip through String, and are canonical.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"anthropic:claude-sonnet-4-5", "openai:qwen2.5-coder:7b", " GEMINI : gemini-2.5-pro ", "mock:scripted", "x", ":", "openai:", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s)
		if err != nil {
			return
		}
		if spec.Model == "" || spec.Provider != strings.ToLower(spec.Provider) {
			t.Fatalf("accepted %q as %+v", s, spec)
		}
		again, err := ParseSpec(spec.String())
		if err != nil || again != spec {
			t.Fatalf("round trip %q -> %+v -> %+v, %v", s, spec, again, err)
		}
		// Pricing any accepted name must not panic.
		DefaultPrices().Price(spec)
	})
}

// FuzzParseRetryAfter: any header yields a bounded, non-negative wait or none.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT", "-1", "1e400", "NaN", "Inf", ""} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, after, afterMS string) {
		h := http.Header{}
		h.Set("retry-after", after)
		h.Set("retry-after-ms", afterMS)
		d, ok := ParseRetryAfter(h, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q, %q) = %v, %v", after, afterMS, d, ok)
		}
	})
}

// FuzzSlug: a slug is always a safe, non-empty file-name part.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"draft", "../../x", "", "Ünïcode stuff", "a--b", strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Slug(s)
		if out == "" || len(out) > 40 || strings.HasPrefix(out, "-") || strings.HasSuffix(out, "-") || strings.Contains(out, "--") {
			t.Fatalf("Slug(%q) = %q", s, out)
		}
		for _, r := range out {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("Slug(%q) = %q has %q", s, out, r)
			}
		}
		if Slug(out) != out {
			t.Fatalf("Slug is not idempotent on %q", out)
		}
	})
}

// FuzzLastSeq: the highest prefix of two names is the higher of each alone, never negative.
func FuzzLastSeq(f *testing.F) {
	f.Add("001-prompt-x.md", "002-response-x.md")
	f.Add("-1-x", "+7-y")
	f.Add("0000000000001-z", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		n := LastSeq([]string{a, b})
		if n < 0 || n != max(LastSeq([]string{a}), LastSeq([]string{b})) {
			t.Fatalf("LastSeq(%q, %q) = %d", a, b, n)
		}
	})
}
