package runs

import (
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/config"
)

func TestIssueModelResolution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		models            config.Models
		req               IssueRequest
		drafter, reviewer string
	}{
		{name: "defaults", drafter: "anthropic:claude-sonnet-4-5", reviewer: "gemini:gemini-2.5-pro"},
		{name: "models from the config", models: config.Models{Drafter: "mock:scripted", Reviewer: "openai:gpt-4.1"},
			drafter: "mock:scripted", reviewer: "openai:gpt-4.1"},
		{name: "flags over config models", models: config.Models{Drafter: "mock:scripted"}, req: IssueRequest{Drafter: "anthropic:claude-opus-4-1"},
			drafter: "anthropic:claude-opus-4-1", reviewer: "gemini:gemini-2.5-pro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Mocked models: resolution never needs a key, and the run
			// records the model it really uses.
			env := &Env{Getenv: func(k string) string {
				if k == "AZERO_MOCK_LLM" {
					return "1"
				}
				return ""
			}, WorkDir: "/work", Now: time.Now}
			d, r, err := issueModels(env, config.Config{Models: tt.models}, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Configured != tt.drafter || r.Configured != tt.reviewer {
				t.Errorf("models %s / %s; want %s / %s", d.Configured, r.Configured, tt.drafter, tt.reviewer)
			}
			if effectiveModel(d) != "mock:scripted" || effectiveModel(r) != "mock:scripted" {
				t.Errorf("mocked runs record %s / %s, want the scripted model", effectiveModel(d), effectiveModel(r))
			}
		})
	}
}
