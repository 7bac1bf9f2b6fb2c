package cli

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
		{name: "nothing chosen", want: engineLocal},
		{name: "the config", cfg: config.Engine{Kind: "temporal", Address: "t:7233"}, want: engineTemporal},
		{name: "--engine local over the config", cfg: config.Engine{Kind: "temporal"}, flags: EngineFlags{Kind: "local"}, want: engineLocal},
		{name: "--temporal implies temporal", flags: EngineFlags{Address: "t:7233"}, want: engineTemporal},
		{name: "--engine temporal over a local config", cfg: config.Engine{Kind: "local"}, flags: EngineFlags{Kind: "temporal"}, want: engineTemporal},
		{name: "an unknown engine", flags: EngineFlags{Kind: "kubernetes"}, usage: true},
		{name: "an unknown engine in the config", cfg: config.Engine{Kind: "nomad"}, usage: true},
		{name: "--temporal with --engine local", flags: EngineFlags{Kind: "local", Address: "t:7233"}, usage: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &Factory{EngineFlags: c.flags}
			got, err := f.engineKind(config.Config{Engine: c.cfg})
			var ue *UsageError
			if c.usage != errors.As(err, &ue) || got != c.want {
				t.Errorf("engineKind = %q, %v; want %q (usage error: %v)", got, err, c.want, c.usage)
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
	companion := filepath.Join(release, temporalCommand)
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
