package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/audit"
)

// allowedNames are the variables Environ passes, by exact name.
var allowedNames = []string{
	"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "NO_COLOR", "COLORTERM", "USER", "LOGNAME",
	// Go
	"GOROOT", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOPRIVATE",
	"GOSUMDB", "GOTOOLCHAIN", "GOEXPERIMENT", "GODEBUG", "GOAMD64", "GOARM64",
	// C toolchains
	"CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "PKG_CONFIG_PATH",
	// Rust
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "RUSTDOCFLAGS",
	// Python
	"PYTHONPATH", "VIRTUAL_ENV", "PYTHONIOENCODING", "PYTHONUTF8", "PYENV_ROOT", "PYENV_VERSION",
	// JavaScript
	"NODE_PATH", "NODE_OPTIONS", "NVM_DIR", "VOLTA_HOME",
	// JVM
	"JAVA_HOME", "MAVEN_OPTS", "GRADLE_OPTS",
}

// allowedPrefixes are the families of variables Environ passes.
var allowedPrefixes = []string{"LC_", "CGO_", "CARGO_BUILD_", "CARGO_TERM_"}

// jailNames are the variables a jail sets itself.
var jailNames = []string{"HOME", "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}

// Environ returns the variables of environ a sandboxed command may see:
// the allowlist (see the package documentation) and the names in extra,
// never a name that looks like a credential (audit.IsSecretName), even when
// listed.
func Environ(environ, extra []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || audit.IsSecretName(k) {
			continue
		}
		if slices.Contains(allowedNames, k) || slices.Contains(extra, k) || slices.ContainsFunc(allowedPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out = append(out, kv)
		}
	}
	return out
}

// environ is the environment of a command in the jail.
func (j *Jail) environ(environ, settings []string) []string {
	env := Environ(environ, j.s.cfg.Env)
	for _, kv := range settings {
		if k, _, ok := strings.Cut(kv, "="); ok && !audit.IsSecretName(k) {
			env = append(env, kv)
		}
	}
	// Toolchains that find their homes through HOME still find them.
	home := j.s.cfg.Home
	defaults := [][2]string{
		{"GOPATH", filepath.Join(home, "go")},
		{"CARGO_HOME", filepath.Join(home, ".cargo")},
		{"RUSTUP_HOME", filepath.Join(home, ".rustup")},
		{"PYTHONUSERBASE", filepath.Join(home, ".local")},
	}
	for _, d := range defaults {
		if home != "" && lookup(env, d[0]) == "" && exists(d[1]) {
			env = append(env, d[0]+"="+d[1])
		}
	}
	if !j.s.Network() {
		env = append(env, "GOPROXY=off", "CARGO_NET_OFFLINE=true")
		if lookup(env, "GOTOOLCHAIN") == "" {
			env = append(env, "GOTOOLCHAIN=local")
		}
	}
	env = slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(jailNames, k)
	})
	return append(env,
		"HOME="+j.Home, "TMPDIR="+j.Tmp, "TMP="+j.Tmp, "TEMP="+j.Tmp,
		"XDG_CONFIG_HOME="+filepath.Join(j.Home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(j.Home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(j.Home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(j.Home, ".local", "state"))
}

// lookup reads name from an environment list (the last value wins).
func lookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
