package runs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/azero-dev/azero/internal/config"
)

func TestEngineKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		cfg   config.Engine
		flags EngineFlags
		want  string
		usage bool
	}{
		{name: "nothing chosen", want: Local},
		{name: "the config", cfg: config.Engine{Kind: "temporal", Address: "t:7233"}, want: Temporal},
		{name: "--engine local over the config", cfg: config.Engine{Kind: "temporal"}, flags: EngineFlags{Kind: "local"}, want: Local},
		{name: "--temporal implies temporal", flags: EngineFlags{Address: "t:7233"}, want: Temporal},
		{name: "--engine temporal over a local config", cfg: config.Engine{Kind: "local"}, flags: EngineFlags{Kind: "temporal"}, want: Temporal},
		{name: "an unknown engine", flags: EngineFlags{Kind: "kubernetes"}, usage: true},
		{name: "an unknown engine in the config", cfg: config.Engine{Kind: "nomad"}, usage: true},
		{name: "--temporal with --engine local", flags: EngineFlags{Kind: "local", Address: "t:7233"}, usage: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.flags.kind(config.Config{Engine: c.cfg})
			var re *RequestError
			if c.usage != errors.As(err, &re) || got != c.want {
				t.Errorf("kind = %q, %v; want %q (request error: %v)", got, err, c.want, c.usage)
			}
		})
	}
}

// TestTemporalNextTo: azero-temporal is found next to the executable a
// symlink on the PATH leads to, and only when it can be run.
func TestTemporalNextTo(t *testing.T) {
	t.Parallel()
	release, bin := t.TempDir(), t.TempDir()
	exe := filepath.Join(release, "azero-linux-amd64")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "azero")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	companion := filepath.Join(release, TemporalCommand)
	if p, dir := temporalNextTo(link); p != "" || dir != release {
		t.Errorf("without a companion: %q in %q", p, dir)
	}
	if err := os.WriteFile(companion, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, _ := temporalNextTo(link); p != "" {
		t.Errorf("a companion that cannot be run was chosen: %q", p)
	}
	if err := os.Chmod(companion, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, _ := temporalNextTo(link); p != companion {
		t.Errorf("found %q, want %q next to the link's target", p, companion)
	}
}
