package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRepoOverridesUser(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), `
[models]
drafter = "anthropic:claude-sonnet-4-5"
coder = "openai:gpt-4.1"
[providers.openai]
api_key = "sk-user-file-key"
[implement]
budget = 2.5
`)
	write(t, filepath.Join(repo, ".azero", "config.toml"), `
[models]
coder = "openai:qwen2.5-coder"
[providers.openai]
base_url = "http://localhost:11434/v1"
[implement]
runner = "go"
[prices."openai:qwen2.5-coder"]
input = 0
output = 0
`)
	cfg, srcs, err := config.Load(user, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 {
		t.Errorf("sources = %v", srcs)
	}
	if cfg.Models.Drafter != "anthropic:claude-sonnet-4-5" || cfg.Models.Coder != "openai:qwen2.5-coder" {
		t.Errorf("models = %+v", cfg.Models)
	}
	if cfg.Providers.OpenAI.APIKey != "sk-user-file-key" || cfg.Providers.OpenAI.BaseURL != "http://localhost:11434/v1" {
		t.Errorf("openai = %+v", cfg.Providers.OpenAI)
	}
	if cfg.Implement.Budget == nil || *cfg.Implement.Budget != 2.5 || cfg.Implement.Runner != "go" {
		t.Errorf("implement = %+v", cfg.Implement)
	}
	if _, ok := cfg.Prices["openai:qwen2.5-coder"]; !ok {
		t.Errorf("prices = %v", cfg.Prices)
	}
}

func TestStrictErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		repo       bool
		want       []string
	}{
		{"unknown key", "[models]\ndrafter = \"mock:scripted\"\ncodr = \"x\"\n", false, []string{"unknown key models.codr", "line 3"}},
		{"unknown table", "[modles]\ncoder = \"x\"\n", false, []string{"unknown key modles"}},
		{"bad syntax", "[models\n", false, []string{"config.toml:1"}},
		{"wrong type", "[implement]\nbudget = \"lots\"\n", false, []string{"config.toml"}},
		{"bad runner", "[implement]\nrunner = \"jest\"\n", false, []string{"implement.runner", "pytest"}},
		{"negative budget", "[implement]\nbudget = -1.0\n", false, []string{"must not be negative"}},
		{"key in repo", "[providers.anthropic]\napi_key = \"sk-ant-x\"\n", true, []string{"providers.anthropic.api_key", "must not be kept in the repository"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			user, repo := "", ""
			path := filepath.Join(dir, "azero", "config.toml")
			if tt.repo {
				path, repo = filepath.Join(dir, ".azero", "config.toml"), dir
			} else {
				user = dir
			}
			write(t, path, tt.body)
			_, _, err := config.Load(user, repo)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestTwoRepoFilesRefused(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	write(t, filepath.Join(repo, ".azero", "config.toml"), "")
	write(t, filepath.Join(repo, "azero.toml"), "")
	if _, _, err := config.Load("", repo); err == nil || !strings.Contains(err.Error(), "keep one") {
		t.Fatalf("err = %v", err)
	}
}

func TestNoFilesIsEmptyConfig(t *testing.T) {
	t.Parallel()
	cfg, srcs, err := config.Load(t.TempDir(), t.TempDir())
	if err != nil || len(srcs) != 0 || cfg.Models.Coder != "" {
		t.Fatalf("Load = %+v, %v, %v", cfg, srcs, err)
	}
}
