package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/testrun"
)

// implement.runner takes every runner kind azero has, and nothing else.
func TestImplementRunnerKinds(t *testing.T) {
	t.Parallel()
	for _, kind := range append(testrun.Kinds(), "") {
		cfg, err := config.Parse([]byte("[implement]\nrunner = \""+kind+"\"\n"), config.Source{Path: "c.toml"})
		if err != nil || cfg.Implement.Runner != kind {
			t.Errorf("runner %q: %v (%q)", kind, err, cfg.Implement.Runner)
		}
	}
	_, err := config.Parse([]byte("[implement]\nrunner = \"mocha\"\n"), config.Source{Path: "c.toml"})
	if err == nil || !strings.Contains(err.Error(), "implement.runner \"mocha\"") || !strings.Contains(err.Error(), "vitest") {
		t.Errorf("an unknown runner: %v", err)
	}
	if slices.Contains(testrun.Kinds(), "mocha") {
		t.Fatal("the test proves nothing: mocha is a runner")
	}
}
