package config_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/azero-dev/azero/internal/config"
)

// FuzzParse: any file either parses, and then survives a round trip
// (encode, parse again, encode: the same bytes), or is refused with an
// error naming the file; decoding never panics.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"[models]\ndrafter = \"anthropic:claude-sonnet-4-5\"\n",
		"[implement]\nbudget = \"two\"\n",
		"[implement]\nbudget = 2\nrunner = \"go\"\n",
		"[[implement]]\nbudget = 1\n",
		"prices = 3\n",
		"[prices.\"openai:x\"]\ninput = 0.5\noutput = 1\n",
		"[providers]\nanthropic = \"sk\"\n",
		"mock.script = false\n",
		"[models]\ndrafter = \"a\"\n[models]\n",
		"[implement]\nbudget = 1e400\n",
		"[implement]\nbudget = nan\n",
		"[sandbox]\nmode = \"off\"\nmax_file_size = \"2G\"\nenv = [\"A\"]\n",
	} {
		f.Add([]byte(seed))
	}
	src := config.Source{Path: "/cfg/config.toml"}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data, src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config /cfg/config.toml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		once, err := toml.Marshal(cfg)
		if err != nil {
			t.Fatalf("encode %+v: %v", cfg, err)
		}
		again, err := config.Parse(once, src)
		if err != nil {
			t.Fatalf("what parsed does not parse again: %v\n%s", err, once)
		}
		twice, err := toml.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("round trip changed the config:\n%s\n%s", once, twice)
		}
	})
}

// FuzzParseSize: a size either reads as a positive number of bytes that
// its digits and unit account for, or is refused; never a panic, never an
// overflow to a negative or zero size.
func FuzzParseSize(f *testing.F) {
	for _, seed := range []string{"1", "512K", "2G", "8388607T", "8388608T", "-1", "1.5G", "", "KiB"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := config.ParseSize(s)
		if err != nil {
			return
		}
		if n <= 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}
