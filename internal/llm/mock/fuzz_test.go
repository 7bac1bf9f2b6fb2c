package mock

import (
	"errors"
	"os"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
)

// FuzzParseScript: the parser never panics, rejects with ErrScript, accepts only valid replies,
// and what it accepts survives a Marshal/parse round trip unchanged.
func FuzzParseScript(f *testing.F) {
	if data, err := os.ReadFile("testdata/script.toml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"[[reply]]\nrole = \"coder\"\nturn = 1\ntext = \"x\"\n",
		"[[reply]]\nrole = \"coder\"\nturn = 1\nerror = \"transient\"\nretry_after = \"1.5s\"\nmessage = \"m\"\n",
		"reply = [{role = \"drafter\", turn = 2, stop = \"refused\"}]",
		"[[reply]]\nrole = \"reviewer\"\nturn = 1\ntext = '''\nmulti\n[[reply]]\n'''\n",
		"[other]\nx = 1\n[[reply]]\nrole = \"coder\"\n",
		"[[reply]]\nrole = \"coder\"\nturn = 9999999999999\n",
		"[[reply]]\n\"role\" = \"coder\"\n'turn' = 1\n",
		"[[reply]]\nrole = \"coder\"\nturn = 1\ninput_tokens = -1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript("fuzz.toml", data)
		if err != nil {
			if !errors.Is(err, ErrScript) {
				t.Fatalf("error without ErrScript: %v", err)
			}
			return
		}
		for i, r := range s.Replies {
			if !r.Role.Valid() || r.Turn < 1 || r.Turn > maxTurn || r.InputTokens < 0 || r.OutputTokens < 0 {
				t.Fatalf("reply %d accepted but invalid: %+v", i+1, r)
			}
			switch r.Stop {
			case llm.StopEnd, llm.StopMaxTokens, llm.StopRefused, llm.StopOther:
			default:
				t.Fatalf("reply %d has stop %q", i+1, r.Stop)
			}
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("marshal an accepted script: %v", err)
		}
		again, err := ParseScript("again.toml", out)
		if err != nil {
			t.Fatalf("re-parse of marshalled script: %v\n%s", err, out)
		}
		if !sameReplies(s.Replies, again.Replies) {
			t.Fatalf("round trip changed the script:\n%+v\n%+v", s.Replies, again.Replies)
		}
	})
}
