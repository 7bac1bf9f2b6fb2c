// Package llm is azero's one small interface to language models, and everything about model
// calls that does not depend on a provider: model names (provider:model), error classes,
// retries, prices, token estimates, metering against a budget, and run lineage.
//
// Provider packages (anthropic, gemini, openai, mock) implement [Model]; package provider opens
// one from a "provider:model" string. A workflow holds only a [Model] and never learns which
// provider answers.
//
// The providers speak HTTP directly (one [Post] and each wire format, tested against httptest
// servers that answer as the real APIs do) rather than through the official SDKs, for a measured
// reason: azero makes one non-streaming call per request, and the SDKs cost more than they give.
// Measured in this project on a stripped linux/amd64 build: the OpenAI Go SDK added 20 MB to the
// binary and 1.6 ms to the start of every command (it registers its types at init), the
// Anthropic SDK 9 MB and 0.75 ms, the three official SDKs together 68 MB and about 2 ms
// (DESIGN.md, "Dependencies"). Every command pays the start-up, including the git hook's
// `azero gate`, which never calls a model. Revisit if streaming or tool use is needed.
//
// Invariants:
//   - Errors from a model are classified: a [*ProviderError] is either transient (retried by
//     [WithRetry]) or permanent (returned at once, carrying the provider's own message). Any other
//     error is permanent. errors.Is(err, ErrTransient) / errors.Is(err, ErrPermanent) tell which.
//   - [WithRetry] is the only retry loop: provider packages never retry.
//     It makes a bounded number of attempts, each under its own timeout, and stops at once when
//     the caller's context is done.
//   - Prices live in one table (prices.go). A model missing from the table costs 0 and is
//     reported as unpriced; it is never guessed.
//   - [Meter] refuses a call, without calling the model, when the spent amount plus the call's
//     estimated cost would exceed the budget.
//   - Nothing in this package reads the process environment or writes files: environment
//     variables come through an injected getenv, and lineage files through [Lineage].
//   - API keys never appear in errors, lineage or recorded calls.
package llm
