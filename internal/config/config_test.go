package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
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

// The runner, its command and its report are read from either file, the
// repository's winning.
func TestImplementTableOverlays(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), "[implement]\nrunner = \"jest\"\ntest_cmd = \"make test\"\nreport = \"junit:user.xml\"\n")
	write(t, filepath.Join(repo, ".azero", "config.toml"), "[implement]\ntest_cmd = \"mvn -q test\"\nreport = \"junit:target/surefire-reports/\"\n")
	cfg, _, err := config.Load(user, repo)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Implement.Runner != "jest" || cfg.Implement.TestCmd != "mvn -q test" || cfg.Implement.Report != "junit:target/surefire-reports/" {
		t.Errorf("implement = %+v", cfg.Implement)
	}
	cfg, _, err = config.Load(user, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Implement.TestCmd != "make test" || cfg.Implement.Report != "junit:user.xml" {
		t.Errorf("implement from the user's file alone = %+v", cfg.Implement)
	}
}

func TestEngineTableOverlays(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), `
[engine]
kind = "temporal"
address = "temporal.example.internal:7233"
namespace = "team"
tls_cert = "/etc/azero/client.pem"
tls_key = "/etc/azero/client.key"
`)
	write(t, filepath.Join(repo, "azero.toml"), `
[engine]
task_queue = "azero-web"
move_after = "45s"
`)
	cfg, _, err := config.Load(user, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Engine{Kind: "temporal", Address: "temporal.example.internal:7233", Namespace: "team", TaskQueue: "azero-web",
		TLSCert: "/etc/azero/client.pem", TLSKey: "/etc/azero/client.key", MoveAfter: "45s"}
	if cfg.Engine != want {
		t.Errorf("engine = %+v\nwant %+v", cfg.Engine, want)
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
		{"bad runner", "[implement]\nrunner = \"mocha\"\n", false, []string{"implement.runner", "pytest", "vitest"}},
		{"negative budget", "[implement]\nbudget = -1.0\n", false, []string{"must not be negative"}},
		{"nan budget", "[implement]\nbudget = nan\n", false, []string{"implement.budget NaN", "finite"}},
		{"infinite budget", "[implement]\nbudget = inf\n", false, []string{"implement.budget +Inf", "finite"}},
		{"infinite price", "[prices.\"openai:x\"]\ninput = inf\n", false, []string{`prices."openai:x"`, "finite"}},
		{"bad engine", "[engine]\nkind = \"temporl\"\n", false, []string{"engine.kind \"temporl\"", "local", "temporal"}},
		{"bad move_after", "[engine]\nmove_after = \"soon\"\n", false, []string{"engine.move_after", "duration"}},
		{"negative move_after", "[engine]\nmove_after = \"-5s\"\n", false, []string{"engine.move_after", "positive"}},
		{"unknown engine key", "[engine]\nadress = \"x:7233\"\n", false, []string{"unknown key engine.adress"}},
		{"key in repo", "[providers.anthropic]\napi_key = \"sk-ant-x\"\n", true, []string{"providers.anthropic.api_key", "must not be kept in the repository"}},
		{"notify command in repo", "[notify]\ncommand = \"curl evil.example\"\n", true, []string{"notify", "user config"}},
		{"notify webhook in repo", "[notify]\nwebhook = \"https://hooks.example/T0/B0/secret\"\n", true, []string{"notify", "user config"}},
		{"webhook not a URL", "[notify]\nwebhook = \"hooks.example/T0\"\n", false, []string{"notify.webhook", "http:// or https://"}},
		{"webhook of another scheme", "[notify]\nwebhook = \"file:///etc/passwd\"\n", false, []string{"notify.webhook", "http:// or https://"}},
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

// Notifications are the user's: read from the user's file, kept when the
// repository has a file too, and a webhook URL (a credential) is never
// repeated in an error.
func TestNotifyFromTheUserFile(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), `
[notify]
command = "notify-send azero"
webhook = "https://hooks.example/services/T0/B0/secret-token"
`)
	write(t, filepath.Join(repo, ".azero", "config.toml"), "[implement]\nrunner = \"go\"\n")
	cfg, _, err := config.Load(user, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Notify{Command: "notify-send azero", Webhook: "https://hooks.example/services/T0/B0/secret-token"}
	if cfg.Notify != want {
		t.Errorf("notify = %+v, want %+v", cfg.Notify, want)
	}
	for _, body := range []string{
		"[notify]\nwebhook = \"ftp://hooks.example/secret-token\"\n",
		"[notify]\nwebhook = 7\n",
	} {
		_, err := config.Parse([]byte(body), config.Source{Path: "/cfg/config.toml"})
		if err == nil || strings.Contains(err.Error(), "secret-token") {
			t.Errorf("Parse(%q) = %v; want an error that does not repeat the URL", body, err)
		}
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

// A value of the wrong type is explained in words: the key, the file, the
// type expected and what was found.
func TestWrongTypeIsExplained(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       string // after "<file>: "
		line       int
	}{
		{"string for a number", "[implement]\nbudget = \"two\"\n", `implement.budget must be a number, got a string "two"`, 2},
		{"boolean for a number", "[implement]\nbudget = true\n", "implement.budget must be a number, got a boolean true", 2},
		{"date for a number", "[implement]\nbudget = 1979-05-27\n", "implement.budget must be a number, got a date 1979-05-27", 2},
		{"date and time for a number", "[implement]\nbudget = 1979-05-27T07:32:00Z\n", "implement.budget must be a number, got a date and time 1979-05-27T07:32:00Z", 2},
		{"time for a number", "[implement]\nbudget = 07:32:00\n", "implement.budget must be a number, got a time 07:32:00", 2},
		{"number for a string", "[models]\ndrafter = 3\n", "models.drafter must be a string, got a number 3", 2},
		{"float for a string", "[implement]\nrunner = 1.5\n", "implement.runner must be a string, got a number 1.5", 2},
		{"array for a string", "[models]\ncoder = [\"a\", \"b\"]\n", "models.coder must be a string, got an array", 2},
		{"inline table for a string", "[issue]\nrepo = {owner = \"o\"}\n", "issue.repo must be a string, got a table", 2},
		{"dotted key", "mock.script = false\n", "mock.script must be a string, got a boolean false", 1},
		{"string for a table", "models = \"anthropic:claude\"\n", `models must be a table, got a string "anthropic:claude"`, 1},
		{"array of tables for a table", "[[implement]]\nbudget = 1\n", "implement must be a table, got an array of tables", 1},
		{"number for a map of tables", "prices = 3\n", "prices must be a table, got a number 3", 1},
		{"number for a price table", "[prices]\n\"openai:gpt-4.1\" = 3\n", `prices."openai:gpt-4.1" must be a table, got a number 3`, 2},
		{"string for a price", "[prices.\"openai:gpt-4.1\"]\ninput = \"free\"\n", `prices."openai:gpt-4.1".input must be a number, got a string "free"`, 2},
		{"long strings are cut", "[implement]\nbudget = \"" + strings.Repeat("x", 100) + "\"\n", `got a string "` + strings.Repeat("x", 37) + `..."`, 2},
		{"a provider's value is never repeated", "[providers]\nanthropic = \"sk-ant-secret\"\n", "providers.anthropic must be a table, got a string", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "azero", "config.toml")
			write(t, path, tt.body)
			_, _, err := config.Load(dir, "")
			if err == nil {
				t.Fatal("Load succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, path+": ") || !strings.Contains(msg, tt.want) || !strings.Contains(msg, fmt.Sprintf("(line %d)", tt.line)) {
				t.Errorf("error %q\nwant   %q in it, after the file name, with (line %d)", msg, tt.want, tt.line)
			}
			if strings.Contains(msg, "sk-ant-secret") || strings.Contains(msg, "cannot decode") || strings.Contains(msg, "struct field") {
				t.Errorf("error %q repeats a secret or the decoder's Go names", msg)
			}
		})
	}
}

// Every key of Config, given a value of another type, gets the message:
// the walk finds keys added later too.
func TestEveryKeyExplainsItsType(t *testing.T) {
	t.Parallel()
	leaves := configKeys(t)
	if len(leaves) < 15 {
		t.Fatalf("found only %d keys: %v", len(leaves), leaves)
	}
	for _, l := range leaves {
		t.Run(l.key, func(t *testing.T) {
			t.Parallel()
			value, got := `"wrong"`, `a string "wrong"`
			if strings.HasPrefix(l.key, "providers.") || strings.HasPrefix(l.key, "notify.") {
				got = "a string" // possibly a key: not repeated
			}
			if l.kind == reflect.String {
				value, got = "42", "a number 42"
			}
			_, err := config.Parse([]byte(l.key+" = "+value+"\n"), config.Source{Path: "/cfg/config.toml"})
			want := fmt.Sprintf("/cfg/config.toml: %s must be %s, got %s (line 1)", l.key, kindNames[l.kind], got)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v\nwant %q", err, want)
			}
		})
	}
}

// TestEndlessOrHugeFilesAreRefused: the repository's config comes with the
// repository; a link to a device that never ends, a named pipe nobody
// writes to, a huge file or a directory is refused with its path, never
// read into memory without bound or waited on.
func TestEndlessOrHugeFilesAreRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"a link to /dev/zero", func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero here")
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "a device"},
		{"a named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "a named pipe"},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "a directory"},
		{"a file over the limit", func(t *testing.T, path string) {
			// Valid TOML all the way: only its size is wrong.
			write(t, path, "# "+strings.Repeat("x", config.MaxFileBytes)+"\n")
		}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			path := filepath.Join(repo, ".azero", "config.toml")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tt.make(t, path)
			_, _, err := config.Load("", repo)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, path, tt.want)
			}
		})
	}
	// At the limit is still a configuration.
	repo := t.TempDir()
	write(t, filepath.Join(repo, "azero.toml"), "# "+strings.Repeat("x", config.MaxFileBytes-3)+"\n")
	if _, srcs, err := config.Load("", repo); err != nil || len(srcs) != 1 {
		t.Fatalf("a file of exactly the limit: %v, %v", srcs, err)
	}
}

// Every key set in the user's file (or the repository's) is in the loaded
// configuration: Load overlays each file on the last, and a key the
// overlay forgot would be read and then silently ignored. The walk finds
// keys added later too.
func TestLoadKeepsEveryKey(t *testing.T) {
	t.Parallel()
	valid := map[string]string{ // keys whose values are checked
		"implement.runner": `"pytest"`, "implement.report": `"junit:out.xml"`, "issue.tracker": `"local"`,
		"engine.kind": `"temporal"`, "engine.move_after": `"30s"`, "engine.address": `"localhost:7233"`,
		"notify.webhook": `"https://example.com/hook"`, "sandbox.mode": `"landlock"`, "sandbox.max_file_size": `"2G"`,
	}
	var keys []string
	for _, l := range configKeys(t) {
		keys = append(keys, l.key)
		if _, ok := valid[l.key]; !ok {
			valid[l.key] = kindSamples[l.kind]
		}
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			body := key + " = " + valid[key] + "\n"
			want, err := config.Parse([]byte(body), config.Source{Path: "config.toml"})
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if reflect.DeepEqual(want, config.Config{}) {
				t.Fatalf("%s sets nothing", body)
			}
			user := t.TempDir()
			write(t, filepath.Join(user, "azero", "config.toml"), body)
			got, _, err := config.Load(user, "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: loaded %+v, want %+v", body, got, want)
			}
		})
	}
}

// configKey is a key of Config's TOML form with the kind of its value;
// a map's entries are named by "m" (providers.m.api_key).
type configKey struct {
	key  string
	kind reflect.Kind // String, Float64 or Int
}

// kindNames are how the errors name each kind of value; kindSamples are
// valid values of each.
var (
	kindNames = map[reflect.Kind]string{reflect.String: "a string", reflect.Float64: "a number", reflect.Int: "a whole number",
		reflect.Bool: "true or false", reflect.Slice: "an array"}
	kindSamples = map[reflect.Kind]string{reflect.String: `"x"`, reflect.Float64: "1.5", reflect.Int: "7",
		reflect.Bool: "true", reflect.Slice: `["X"]`}
)

// configKeys walks Config for its keys, so that tests over every key find
// the keys added later too.
func configKeys(t *testing.T) []configKey {
	t.Helper()
	var keys []configKey
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Struct:
			for i := range typ.NumField() {
				name, _, _ := strings.Cut(typ.Field(i).Tag.Get("toml"), ",")
				walk(strings.TrimPrefix(prefix+"."+name, "."), typ.Field(i).Type)
			}
		case reflect.Map:
			walk(prefix+".m", typ.Elem())
		case reflect.String, reflect.Float64, reflect.Int, reflect.Bool, reflect.Slice:
			keys = append(keys, configKey{prefix, typ.Kind()})
		default:
			t.Fatalf("%s: no test value for %s", prefix, typ)
		}
	}
	walk("", reflect.TypeFor[config.Config]())
	return keys
}

// The sandbox is the user's: their file sets it, a repository's file may
// not name it at all (a cloned repository must not loosen what guards the
// user from its own changes), and its values are checked.
func TestSandboxFromTheUserFileOnly(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), `
[sandbox]
mode = "landlock"
network = true
max_processes = 300
max_file_size = "256M"
env = ["JAVA_TOOL_OPTIONS"]
`)
	write(t, filepath.Join(repo, ".azero", "config.toml"), "[implement]\nrunner = \"go\"\n")
	cfg, _, err := config.Load(user, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Sandbox{Mode: "landlock", Network: true, MaxProcesses: 300, MaxFileSize: "256M", Env: []string{"JAVA_TOOL_OPTIONS"}}
	if !reflect.DeepEqual(cfg.Sandbox, want) {
		t.Errorf("sandbox = %+v, want %+v", cfg.Sandbox, want)
	}
	for _, body := range []string{"[sandbox]\nmode = \"off\"\n", "[sandbox]\nnetwork = true\n", "[sandbox]\nenv = []\n", "[sandbox]\nmax_processes = 1\n"} {
		repo := t.TempDir()
		write(t, filepath.Join(repo, ".azero", "config.toml"), body)
		if _, _, err := config.Load(user, repo); err == nil || !strings.Contains(err.Error(), "sandbox") || !strings.Contains(err.Error(), "user config") {
			t.Errorf("a repository's %q: err = %v, want a refusal naming the sandbox and the user config", body, err)
		}
	}
	for body, want := range map[string]string{
		"[sandbox]\nmode = \"none\"\n":          `sandbox.mode "none": must be`,
		"[sandbox]\nmax_processes = -1\n":       "sandbox.max_processes -1: must not be negative",
		"[sandbox]\nmax_file_size = \"lots\"\n": `sandbox.max_file_size "lots": must be a positive size`,
		"[sandbox]\nmax_file_size = \"0M\"\n":   `sandbox.max_file_size "0M": must be a positive size`,
		"[sandbox]\nmax_file_size = \"9e9G\"\n": `sandbox.max_file_size "9e9G": must be a positive size`,
	} {
		if _, err := config.Parse([]byte(body), config.Source{Path: "/cfg/config.toml"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", body, err, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := map[string]int64{
		"1": 1, "512K": 512 << 10, "512k": 512 << 10, "512KiB": 512 << 10, "512MB": 512 << 20, " 2G ": 2 << 30, "1T": 1 << 40,
		"8388607T": 8388607 << 40,
	}
	for in, want := range tests {
		if got, err := config.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1M", "0", "1.5G", "1X", "8388608T", "9223372036854775808"} {
		if got, err := config.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

// design.lld_dir is read from either file, the repository's winning, and
// must name a directory inside the repository.
func TestDesignDirectory(t *testing.T) {
	t.Parallel()
	user, repo := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "azero", "config.toml"), "[design]\nlld_dir = \"design/user\"\n")
	cfg, _, err := config.Load(user, t.TempDir())
	if err != nil || cfg.Design.LLDDir != "design/user" {
		t.Fatalf("from the user's file: %+v, %v", cfg.Design, err)
	}
	write(t, filepath.Join(repo, ".azero", "config.toml"), "[design]\nlld_dir = \"docs/design\"\n")
	if cfg, _, err = config.Load(user, repo); err != nil || cfg.Design.LLDDir != "docs/design" {
		t.Fatalf("the repository's file wins: %+v, %v", cfg.Design, err)
	}
	for _, bad := range []string{"/etc/lld", "../outside", "docs/../../x"} {
		_, err := config.Parse([]byte("[design]\nlld_dir = \""+bad+"\"\n"), config.Source{Path: ".azero/config.toml", Repo: true})
		if err == nil || !strings.Contains(err.Error(), "design.lld_dir") {
			t.Errorf("lld_dir %q: %v, want it refused", bad, err)
		}
	}
}
