package cli

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/testenv"
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

// Every command that drives or lists runs takes --engine and --temporal,
// and refuses an engine that cannot be used as a usage error (exit 2)
// before any work: the demo writes no project.
func TestEveryRunCommandTakesTheEngineFlags(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	repo := testenv.NewRepo(t, map[string]string{"README.md": "x\n"})
	demoDir := t.TempDir()
	commands := map[string][]string{
		"implement": {"implement", "--lld", "design.md"},
		"issue":     {"issue", "--brief", "notes.md"},
		"demo":      {"demo", "--dir", demoDir},
		"runs":      {"runs"},
		"runs show": {"runs", "show", "261124-x"},
		"resume":    {"resume", "261124-x"},
		"serve":     {"serve"},
	}
	for name, args := range commands {
		for _, c := range []struct {
			flags []string
			want  string
		}{
			{[]string{"--engine", "kubernetes"}, `--engine "kubernetes": use local or temporal`},
			{[]string{"--engine", "temporal"}, "needs the cluster's address"},
			{[]string{"--engine", "local", "--temporal", "localhost:7233"}, "needs --engine temporal"},
		} {
			t.Run(name+" "+strings.Join(c.flags, " "), func(t *testing.T) {
				t.Parallel()
				code, out, errOut := runInProcess(t, repo, append(slices.Clone(args), c.flags...)...)
				if code != ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, c.want)
				}
			})
		}
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(demoDir, "textkit")); !os.IsNotExist(err) {
			t.Errorf("a demo refused for its engine should write nothing: %v", err)
		}
	})
}
