package runs

import (
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
)

// Roles are the roles a model plays in azero's workflows, in the order
// they are listed.
var Roles = []llm.Role{llm.RoleDrafter, llm.RoleReviewer, llm.RoleCoder}

// defaultModels are the models per role when neither a flag nor the
// config names one.
var defaultModels = map[llm.Role]string{
	llm.RoleDrafter:  "anthropic:claude-sonnet-4-5",
	llm.RoleReviewer: "gemini:gemini-2.5-pro",
	llm.RoleCoder:    "anthropic:claude-sonnet-4-5",
}

// DefaultModel is the model of role when neither a flag nor the config
// names one.
func DefaultModel(role llm.Role) string { return defaultModels[role] }

// RoleModel returns the model for role: flag, else the config, else the
// default.
func RoleModel(cfg config.Config, role llm.Role, flag string) string {
	if flag != "" {
		return flag
	}
	byRole := map[llm.Role]string{llm.RoleDrafter: cfg.Models.Drafter, llm.RoleReviewer: cfg.Models.Reviewer, llm.RoleCoder: cfg.Models.Coder}
	if m := byRole[role]; m != "" {
		return m
	}
	return defaultModels[role]
}

// effectiveModel is the model a role really uses: the scripted one when
// mocked.
func effectiveModel(st provider.Status) string {
	if st.Mocked {
		return llm.MockSpec
	}
	return st.Spec.String()
}

// maxOutput is the most output a role's reply may ask for: the configured
// max_output_tokens, else the model's known maximum (0 when unknown).
func maxOutput(role config.Role, model string, prices llm.PriceTable) int {
	if role.MaxOutputTokens > 0 {
		return role.MaxOutputTokens
	}
	spec, err := llm.ParseSpec(model)
	if err != nil {
		return 0
	}
	p, _ := prices.Price(spec)
	return p.MaxOutput
}
