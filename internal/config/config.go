// Package config loads azero's settings from TOML files.
//
// Two files are read, the later overriding the earlier key by key:
//
//  1. the user's file, $XDG_CONFIG_HOME/azero/config.toml (~/.config/azero/config.toml);
//  2. the repository's file, .azero/config.toml (or azero.toml at the root).
//
// Decoding is strict: an unknown key is an error naming the key, its line
// and the file, so a typo never silently disables a setting; a value of
// the wrong type names the key, the file, the type expected and the value
// found, in words ("implement.budget must be a number, got a string
// \"two\""). API keys, notification settings and the sandbox's settings
// are refused in the repository's file, which is usually committed and
// comes with the changes azero guards the user from.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/azero-dev/azero/internal/iostreams"
)

// Config is everything azero can be configured with.
type Config struct {
	Models    Models           `toml:"models"`
	Providers Providers        `toml:"providers"`
	Prices    map[string]Price `toml:"prices"`
	Implement Implement        `toml:"implement"`
	Issue     Issue            `toml:"issue"`
	Design    Design           `toml:"design"`
	Mock      Mock             `toml:"mock"`
	Roles     Roles            `toml:"roles"`
	Notify    Notify           `toml:"notify"`
	Engine    Engine           `toml:"engine"`
	Sandbox   Sandbox          `toml:"sandbox"`
}

// Sandbox tunes the confinement of the model's code (its tests, its code,
// the project's scripts azero runs for it). It is the user's setting only:
// a repository's file cannot loosen the sandbox that guards the user from
// that repository's changes.
type Sandbox struct {
	// Mode is "auto" (bubblewrap and Landlock where bubblewrap works,
	// else Landlock alone; the default), "landlock" (never bubblewrap)
	// or "off" (the model's code runs with your full powers).
	Mode string `toml:"mode"`
	// Network lets the model's code reach the network (off by default;
	// loopback inside the sandbox always works).
	Network bool `toml:"network"`
	// MaxProcesses bounds the processes (and threads) of one run of the
	// tests; 0 takes the default.
	MaxProcesses int `toml:"max_processes"`
	// MaxFileSize bounds the size of one file the model's code writes,
	// with a unit: "512M", "2G"; "" takes the default.
	MaxFileSize string `toml:"max_file_size"`
	// Env names environment variables passed to the model's code besides
	// the built-in allowlist (never one whose name looks secret).
	Env []string `toml:"env"`
}

// Engine chooses where workflow runs are driven: "local" (this machine's
// SQLite store, the default) or "temporal" (a Temporal cluster, with
// `azero worker` processes running the steps).
type Engine struct {
	Kind      string `toml:"kind"`       // "local" or "temporal"
	Address   string `toml:"address"`    // HOST:PORT of the Temporal frontend
	Namespace string `toml:"namespace"`  // default "default"
	TaskQueue string `toml:"task_queue"` // default "azero"
	// mTLS: the client certificate and key, a CA to trust instead of the
	// system's, and the server name to verify (Temporal Cloud or a
	// self-hosted cluster with TLS). The API key, if any, is read from
	// $TEMPORAL_API_KEY, never from a file.
	TLSCert    string `toml:"tls_cert"`
	TLSKey     string `toml:"tls_key"`
	TLSCA      string `toml:"tls_ca"`
	ServerName string `toml:"server_name"`
	// MoveAfter is how long a run's step may wait for the worker holding
	// its worktree before the run moves to another worker ("30s").
	MoveAfter string `toml:"move_after"`
}

// Roles tune each model role.
type Roles struct {
	Drafter  Role `toml:"drafter"`
	Reviewer Role `toml:"reviewer"`
	Coder    Role `toml:"coder"`
}

// Role tunes one model role.
type Role struct {
	// MaxOutputTokens caps the output a reply may ask for; a reply cut off
	// at its limit is asked again with more room, up to this (default: the
	// model's known maximum).
	MaxOutputTokens int `toml:"max_output_tokens"`
}

// Models names the model used for each role as "provider:model".
type Models struct {
	Drafter  string `toml:"drafter"`
	Reviewer string `toml:"reviewer"`
	Coder    string `toml:"coder"`
}

// Providers holds per-provider connection settings. Keys are better kept in
// the environment; a key here is only accepted from the user's file.
type Providers struct {
	Anthropic Provider `toml:"anthropic"`
	Gemini    Provider `toml:"gemini"`
	OpenAI    Provider `toml:"openai"`
}

// Provider is one provider's connection settings.
type Provider struct {
	APIKey  string `toml:"api_key"`
	BaseURL string `toml:"base_url"`
}

// Price overrides or adds a model's price, in USD per million tokens.
type Price struct {
	Input  float64 `toml:"input"`
	Output float64 `toml:"output"`
}

// Implement configures `azero implement`.
type Implement struct {
	Runner  string   `toml:"runner"`   // one of runners; "" detects
	TestCmd string   `toml:"test_cmd"` // overrides the runner's command
	Report  string   `toml:"report"`   // FORMAT:PATH of the report test_cmd writes (junit:build/report.xml)
	Budget  *float64 `toml:"budget"`   // USD per run; nil or 0 means no budget
}

// Issue configures `azero issue`.
type Issue struct {
	Tracker   string `toml:"tracker"`    // "github" or "local"
	Repo      string `toml:"repo"`       // OWNER/NAME on GitHub
	AuditDir  string `toml:"audit_dir"`  // default docs/audit
	IssuesDir string `toml:"issues_dir"` // local tracker, default docs/issues
	// Labels are the local tracker's labels beyond those its issues name,
	// offered to the drafter.
	Labels []string `toml:"labels"`
}

// Design configures `azero design`. Its trail goes where issue.audit_dir
// says, as the issue workflow's does.
type Design struct {
	// LLDDir is where approved design documents are committed, relative
	// to the repository's root (default docs/lld).
	LLDDir string `toml:"lld_dir"`
}

// Mock configures the offline scripted model.
type Mock struct {
	Script string `toml:"script"` // path to a reply script
}

// Notify says whom to tell when a run waits for a human, ends or fails.
// It is the user's setting: a repository's file cannot set it (a
// webhook's URL is a credential, and a cloned repository must not choose
// where news of your runs goes).
type Notify struct {
	// Command is run with sh -c and the event as JSON on its stdin.
	Command string `toml:"command"`
	// Webhook receives a POST of the event as JSON with a "text" field
	// (what a Slack or Mattermost incoming webhook shows).
	Webhook string `toml:"webhook"`
}

// Source is a file that was read.
type Source struct {
	Path string
	Repo bool
}

// Files returns the candidate files in the order they are applied:
// the user's file, then the repository's. userConfigDir is typically
// os.UserConfigDir(); repoRoot may be empty outside a repository.
func Files(userConfigDir, repoRoot string) []Source {
	var out []Source
	if userConfigDir != "" {
		out = append(out, Source{Path: filepath.Join(userConfigDir, "azero", "config.toml")})
	}
	if repoRoot != "" {
		out = append(out,
			Source{Path: filepath.Join(repoRoot, ".azero", "config.toml"), Repo: true},
			Source{Path: filepath.Join(repoRoot, "azero.toml"), Repo: true})
	}
	return out
}

// Load reads the files that exist among Files(userConfigDir, repoRoot) and
// returns the merged configuration and the files read.
func Load(userConfigDir, repoRoot string) (Config, []Source, error) {
	var (
		cfg      Config
		read     []Source
		repoFile string
	)
	for _, src := range Files(userConfigDir, repoRoot) {
		data, err := readFile(src.Path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Config{}, nil, fmt.Errorf("read config: %w", err)
		}
		if src.Repo {
			if repoFile != "" {
				return Config{}, nil, fmt.Errorf("config: both %s and %s exist; keep one", repoFile, src.Path)
			}
			repoFile = src.Path
		}
		if err := decode(&cfg, data, src); err != nil {
			return Config{}, nil, err
		}
		read = append(read, src)
	}
	return cfg, read, nil
}

// MaxFileBytes bounds a configuration file: settings are a few lines, and
// the repository's file comes with the repository, so a link to a device
// that never ends (/dev/zero) or a huge file must not exhaust memory.
const MaxFileBytes = 1 << 20

// readFile reads a configuration file: a regular file (a link is followed)
// of at most MaxFileBytes. A FIFO or a device is refused before it is
// opened, since opening or reading one may never end.
func readFile(path string) ([]byte, error) {
	data, err := iostreams.ReadRegularFile(path, MaxFileBytes)
	var notRegular *iostreams.NotRegularError
	var tooLarge *iostreams.InputTooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s is not a regular file (%s): a configuration file is a TOML text file", path, iostreams.FileKind(notRegular.Mode))
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s is larger than %d KiB, far more than any configuration: check that it is the file you meant", path, MaxFileBytes>>10)
	}
	return data, err
}

// Parse decodes one file's content strictly into a fresh Config.
func Parse(data []byte, src Source) (Config, error) {
	var cfg Config
	err := decode(&cfg, data, src)
	return cfg, err
}

func decode(cfg *Config, data []byte, src Source) error {
	// Decode into a fresh value first, so the repository check sees only
	// this file's keys, then overlay it.
	var one Config
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&one); err != nil {
		return describe(err, src.Path, data)
	}
	if src.Repo {
		for name, p := range map[string]Provider{"anthropic": one.Providers.Anthropic, "gemini": one.Providers.Gemini, "openai": one.Providers.OpenAI} {
			if p.APIKey != "" {
				return fmt.Errorf("config %s: providers.%s.api_key: API keys must not be kept in the repository; set the environment variable or use your user config", src.Path, name)
			}
		}
		if one.Notify != (Notify{}) {
			return fmt.Errorf("config %s: notify: notifications are set in your user config (~/.config/azero/config.toml), not in a repository's (a webhook URL is a credential)", src.Path)
		}
		if !one.Sandbox.zero() {
			return fmt.Errorf("config %s: sandbox: the sandbox is set in your user config (~/.config/azero/config.toml), not in a repository's (a repository must not loosen what guards you from its changes)", src.Path)
		}
	}
	if err := one.validate(); err != nil {
		return fmt.Errorf("config %s: %w", src.Path, err)
	}
	overlay(cfg, one)
	return nil
}

func describe(err error, path string, data []byte) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		keys := make([]string, 0, len(strict.Errors))
		for _, e := range strict.Errors {
			row, _ := e.Position()
			keys = append(keys, fmt.Sprintf("%s (line %d)", strings.Join(e.Key(), "."), row))
		}
		return fmt.Errorf("config %s: unknown key %s", path, strings.Join(keys, ", "))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		if msg, ok := wrongType(de.Key(), data); ok {
			return fmt.Errorf("config %s: %s (line %d)", path, msg, row)
		}
		return fmt.Errorf("config %s:%d:%d: %s", path, row, col, de.Error())
	}
	return fmt.Errorf("config %s: %w", path, err)
}

// runners are the test runner kinds implement.runner may name (testrun's
// kinds, which this package cannot import), "" for detection.
var runners = []string{"", "go", "pytest", "node", "vitest", "jest", "cargo", "junit"}

func (c Config) validate() error {
	if !slices.Contains(runners, c.Implement.Runner) {
		return fmt.Errorf("implement.runner %q: must be one of %s (or unset: detected from the project)", c.Implement.Runner, strings.Join(runners[1:], ", "))
	}
	switch c.Issue.Tracker {
	case "", "github", "local":
	default:
		return fmt.Errorf("issue.tracker %q: must be \"github\" or \"local\"", c.Issue.Tracker)
	}
	switch c.Engine.Kind {
	case "", "local", "temporal":
	default:
		return fmt.Errorf("engine.kind %q: must be \"local\" or \"temporal\"", c.Engine.Kind)
	}
	if d := c.Design.LLDDir; d != "" && (filepath.IsAbs(d) || strings.HasPrefix(d, "/") || slices.Contains(strings.Split(filepath.ToSlash(d), "/"), "..")) {
		return fmt.Errorf("design.lld_dir %q: must be a directory inside the repository, relative to its root", d)
	}
	if m := c.Engine.MoveAfter; m != "" {
		if d, err := time.ParseDuration(m); err != nil || d <= 0 {
			return fmt.Errorf("engine.move_after %q: must be a positive duration such as \"30s\"", m)
		}
	}
	if b := c.Implement.Budget; b != nil && *b < 0 {
		return fmt.Errorf("implement.budget %v: must not be negative", *b)
	}
	if b := c.Implement.Budget; b != nil && (math.IsNaN(*b) || math.IsInf(*b, 0)) {
		// nan would never compare as spent, inf never as reached: either
		// silently disables the budget. No budget is 0 or no key.
		return fmt.Errorf("implement.budget %v: must be a finite number of USD (0 or no key means no budget)", *b)
	}
	switch c.Sandbox.Mode {
	case "", "auto", "landlock", "off":
	default:
		return fmt.Errorf("sandbox.mode %q: must be \"auto\", \"landlock\" or \"off\"", c.Sandbox.Mode)
	}
	if n := c.Sandbox.MaxProcesses; n < 0 {
		return fmt.Errorf("sandbox.max_processes %d: must not be negative (0 takes the default)", n)
	}
	if m := c.Sandbox.MaxFileSize; m != "" {
		if _, err := ParseSize(m); err != nil {
			return fmt.Errorf("sandbox.max_file_size %q: %w", m, err)
		}
	}
	if w := c.Notify.Webhook; w != "" {
		u, err := url.Parse(w)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL may hold a token: it is not repeated.
			return errors.New("notify.webhook: must be an http:// or https:// URL")
		}
	}
	for name, p := range c.Prices {
		if p.Input < 0 || p.Output < 0 {
			return fmt.Errorf("prices.%q: prices must not be negative", name)
		}
		if math.IsNaN(p.Input) || math.IsInf(p.Input, 0) || math.IsNaN(p.Output) || math.IsInf(p.Output, 0) {
			return fmt.Errorf("prices.%q: prices must be finite numbers of USD per million tokens", name)
		}
	}
	return nil
}

// overlay copies the values set in src onto dst, so the user's settings
// survive a repository file that does not mention them.
func overlay(dst *Config, src Config) {
	set := func(d *string, s string) {
		if s != "" {
			*d = s
		}
	}
	set(&dst.Models.Drafter, src.Models.Drafter)
	set(&dst.Models.Reviewer, src.Models.Reviewer)
	set(&dst.Models.Coder, src.Models.Coder)
	for _, p := range []struct{ d, s *Provider }{
		{&dst.Providers.Anthropic, &src.Providers.Anthropic},
		{&dst.Providers.Gemini, &src.Providers.Gemini},
		{&dst.Providers.OpenAI, &src.Providers.OpenAI},
	} {
		set(&p.d.APIKey, p.s.APIKey)
		set(&p.d.BaseURL, p.s.BaseURL)
	}
	for k, v := range src.Prices {
		if dst.Prices == nil {
			dst.Prices = map[string]Price{}
		}
		dst.Prices[k] = v
	}
	set(&dst.Implement.Runner, src.Implement.Runner)
	set(&dst.Implement.TestCmd, src.Implement.TestCmd)
	set(&dst.Implement.Report, src.Implement.Report)
	if src.Implement.Budget != nil {
		dst.Implement.Budget = src.Implement.Budget
	}
	set(&dst.Issue.Tracker, src.Issue.Tracker)
	set(&dst.Issue.Repo, src.Issue.Repo)
	set(&dst.Issue.AuditDir, src.Issue.AuditDir)
	set(&dst.Issue.IssuesDir, src.Issue.IssuesDir)
	if src.Issue.Labels != nil {
		dst.Issue.Labels = src.Issue.Labels
	}
	set(&dst.Design.LLDDir, src.Design.LLDDir)
	set(&dst.Mock.Script, src.Mock.Script)
	for _, r := range []struct{ d, s *Role }{
		{&dst.Roles.Drafter, &src.Roles.Drafter}, {&dst.Roles.Reviewer, &src.Roles.Reviewer}, {&dst.Roles.Coder, &src.Roles.Coder},
	} {
		if r.s.MaxOutputTokens != 0 {
			r.d.MaxOutputTokens = r.s.MaxOutputTokens
		}
	}
	set(&dst.Notify.Command, src.Notify.Command)
	set(&dst.Notify.Webhook, src.Notify.Webhook)
	set(&dst.Engine.Kind, src.Engine.Kind)
	set(&dst.Engine.Address, src.Engine.Address)
	set(&dst.Engine.Namespace, src.Engine.Namespace)
	set(&dst.Engine.TaskQueue, src.Engine.TaskQueue)
	set(&dst.Engine.TLSCert, src.Engine.TLSCert)
	set(&dst.Engine.TLSKey, src.Engine.TLSKey)
	set(&dst.Engine.TLSCA, src.Engine.TLSCA)
	set(&dst.Engine.ServerName, src.Engine.ServerName)
	set(&dst.Engine.MoveAfter, src.Engine.MoveAfter)
	set(&dst.Sandbox.Mode, src.Sandbox.Mode)
	dst.Sandbox.Network = dst.Sandbox.Network || src.Sandbox.Network
	if src.Sandbox.MaxProcesses != 0 {
		dst.Sandbox.MaxProcesses = src.Sandbox.MaxProcesses
	}
	set(&dst.Sandbox.MaxFileSize, src.Sandbox.MaxFileSize)
	if src.Sandbox.Env != nil {
		dst.Sandbox.Env = src.Sandbox.Env
	}
}

func (s Sandbox) zero() bool {
	return s.Mode == "" && !s.Network && s.MaxProcesses == 0 && s.MaxFileSize == "" && s.Env == nil
}

// ParseSize reads a size in bytes with an optional binary unit: "1048576",
// "512K", "512M", "2G" (KiB, MiB, GiB; a trailing "B" or "iB" is allowed).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	switch {
	case strings.HasSuffix(t, "K"):
		shift = 10
	case strings.HasSuffix(t, "M"):
		shift = 20
	case strings.HasSuffix(t, "G"):
		shift = 30
	case strings.HasSuffix(t, "T"):
		shift = 40
	}
	if shift > 0 {
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, errors.New(`must be a positive size such as "512M" or "2G"`)
	}
	return n << shift, nil
}
