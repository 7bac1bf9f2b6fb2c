package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// CredentialPlaces are where credentials and azero's own secrets live. No
// sandboxed command can read them, even when they lie inside a place it
// may otherwise read: bubblewrap and the namespaces mask them (an empty
// directory, or /dev/null for a file), Landlock never grants them (grants
// are split around them), Seatbelt denies them. "~/" is the user's real
// home (Config.Home). Keep this the one list.
var CredentialPlaces = []string{
	// keys, tokens and logins
	"~/.ssh", "~/.gnupg", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.password-store",
	"~/.local/share/keyrings", "~/.pgpass", "~/.my.cnf",
	// clouds and their command lines
	"~/.aws", "~/.azure", "~/.config/gcloud", "~/.oci", "~/.config/doctl", "~/.kube", "~/.docker",
	"~/.config/containers/auth.json", "~/.terraform.d", "~/.vault-token", "~/.config/op", "~/.config/rclone",
	// forges
	"~/.config/gh", "~/.config/hub", "~/.config/glab-cli",
	// package registries
	"~/.npmrc", "~/.yarnrc", "~/.yarnrc.yml", "~/.pypirc", "~/.config/pip/pip.conf", "~/.cargo/credentials",
	"~/.cargo/credentials.toml", "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.gradle/gradle.properties",
	"~/.gem/credentials", "~/.nuget/NuGet/NuGet.Config",
	// azero's own configuration (model keys, notify commands), state (store,
	// audit log, answer key, serve token) and caches
	"~/.config/azero", "~/.local/state/azero", "~/.cache/azero",
	// the system's
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/ssl/private",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd", "/etc/wireguard",
	"/etc/NetworkManager/system-connections", "/etc/krb5.keytab",
}

// systemRoots are the top-level directories of the system a command may
// read; those that are symbolic links (/lib -> usr/lib) stay links.
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/sys"}

// toolchainPlaces are the toolchains under the home a command may read.
// ~/.cargo is granted piece by piece: it also holds credentials.toml.
var toolchainPlaces = []string{
	"~/.cargo/bin", "~/.cargo/registry", "~/.cargo/git", "~/.cargo/env", "~/.rustup",
	"~/.local/bin", "~/.local/lib", "~/.nvm", "~/.pyenv", "~/.volta", "~/.bun", "~/.deno", "~/.sdkman",
	"~/.m2/repository", "~/.gradle/caches", "~/.gradle/wrapper",
}

// expandHome replaces a leading "~/" with home.
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home == "" {
			return ""
		}
		return filepath.Join(home, rest)
	}
	return p
}

// root is a system root: a directory, or a link to one.
type root struct {
	path string
	link string // the link's target as written, for a symbolic link
}

// plan is what one command may see, computed from the jail's spec, the
// sandbox's configuration and the command's environment.
type plan struct {
	roots   []root   // the system roots that exist
	read    []string // readable besides the roots: resolved, existing, none inside another grant
	write   []string // writable: resolved, existing
	protect []string // read-only inside writable ones, existing
	hidden  []string // everything hidden, existing or not
	masks   []string // hidden paths that exist inside a visible place and hold no grant
	dir     string
}

// plan computes what the command argv0 may touch.
func (j *Jail) plan(argv0 string, env []string) plan {
	s := j.s
	home := s.cfg.Home
	var p plan
	p.dir = j.spec.Dir
	for _, r := range systemRoots {
		info, err := os.Lstat(r)
		switch {
		case err != nil:
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(r); err == nil {
				p.roots = append(p.roots, root{path: r, link: target})
			}
		case info.IsDir():
			p.roots = append(p.roots, root{path: r})
		}
	}
	for _, c := range CredentialPlaces {
		if e := expandHome(c, home); e != "" {
			p.hidden = append(p.hidden, e)
		}
	}
	p.hidden = append(p.hidden, absAll(s.cfg.Hide)...)
	p.hidden = append(p.hidden, j.spec.Hide...)
	for _, h := range slices.Clone(p.hidden) {
		if r, err := filepath.EvalSymlinks(h); err == nil && r != h {
			p.hidden = append(p.hidden, r)
		}
	}

	p.write = dedupe(append(slices.Clone(j.spec.Writable), j.Tmp, j.Home))
	// Places found automatically never reach into a hidden place, the
	// home itself or above it; the ones the caller named are taken as named.
	var read []string
	for _, c := range toolchainPaths(home, env, p.hidden) {
		r, err := resolve(c)
		if err != nil || r == "/" || (home != "" && inside(home, r)) || within(r, p.hidden) {
			continue
		}
		read = append(read, r)
	}
	for _, c := range s.cfg.ReadOnly {
		if r, err := resolve(c); err == nil {
			read = append(read, r)
		}
	}
	read = append(read, j.spec.ReadOnly...)
	if s.cfg.Network {
		// A resolver configuration linked out of /etc (systemd-resolved's
		// in /run).
		if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil {
			read = append(read, filepath.Dir(target))
		}
	}
	if filepath.IsAbs(argv0) {
		// The program the caller chose to run, and what a link to it names.
		if !within(argv0, p.hidden) && exists(argv0) {
			read = append(read, filepath.Clean(argv0))
		}
		if r, err := filepath.EvalSymlinks(argv0); err == nil && !within(r, p.hidden) {
			read = append(read, r)
		}
	}
	var rootDirs []string
	for _, r := range p.roots {
		if r.link == "" {
			rootDirs = append(rootDirs, r.path)
		}
	}
	sort.Strings(read)
	for _, r := range dedupe(read) {
		if within(r, p.write) {
			continue // writable anyway
		}
		covered := within(r, rootDirs) || within(r, p.read)
		if covered && !slices.ContainsFunc(p.hidden, func(h string) bool { return inside(r, h) }) {
			continue // visible anyway
		}
		p.read = append(p.read, r)
	}
	for _, pr := range j.spec.Protect {
		if exists(pr) && within(pr, p.write) {
			p.protect = append(p.protect, pr)
		}
	}
	visible := slices.Concat(rootDirs, p.read, p.write)
	grants := slices.Concat(p.read, p.write)
	for _, h := range dedupe(p.hidden) {
		holdsGrant := slices.ContainsFunc(grants, func(g string) bool { return inside(g, h) })
		if exists(h) && within(h, visible) && !holdsGrant {
			p.masks = append(p.masks, h)
		}
	}
	return p
}

// toolchainPaths are the places under the home and named by the
// environment where toolchains live: GOROOT, the Go module cache, cargo's
// and rustup's homes, a virtual environment, the toolchainPlaces, and the
// PATH entries under the home (the directory above an entry ending in /bin,
// such as ~/sdk/go1.26/bin, unless that is the home or holds a hidden
// place).
func toolchainPaths(home string, env, hidden []string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	for _, t := range toolchainPlaces {
		add(expandHome(t, home))
	}
	path := lookup(env, "PATH")
	goroot := lookup(env, "GOROOT")
	if goroot == "" {
		goroot = gorootOf(path)
	}
	add(goroot)
	switch {
	case lookup(env, "GOMODCACHE") != "":
		add(lookup(env, "GOMODCACHE"))
	case lookup(env, "GOPATH") != "":
		for _, gp := range filepath.SplitList(lookup(env, "GOPATH")) {
			add(filepath.Join(gp, "pkg", "mod"))
		}
	case home != "":
		add(filepath.Join(home, "go", "pkg", "mod"))
	}
	if ch := lookup(env, "CARGO_HOME"); ch != "" {
		for _, sub := range []string{"bin", "registry", "git", "env"} {
			add(filepath.Join(ch, sub))
		}
	}
	add(lookup(env, "RUSTUP_HOME"))
	add(lookup(env, "VIRTUAL_ENV"))
	for _, e := range filepath.SplitList(path) {
		if !filepath.IsAbs(e) || home == "" || !inside(e, home) || e == home {
			continue
		}
		e = filepath.Clean(e)
		if filepath.Base(e) == "bin" {
			parent := filepath.Dir(e)
			holdsHidden := slices.ContainsFunc(hidden, func(h string) bool { return inside(h, parent) })
			if parent != home && !holdsHidden {
				e = parent
			}
		}
		add(e)
	}
	return out
}

// gorootOf finds the root of the go command on path: the directory above
// the bin directory holding it.
func gorootOf(path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		bin := filepath.Join(dir, "go")
		info, err := os.Stat(bin)
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(bin)
		if err != nil {
			return ""
		}
		if d := filepath.Dir(real); filepath.Base(d) == "bin" {
			return filepath.Dir(d)
		}
		return ""
	}
	return ""
}

// split returns grants that cover paths but none of the hidden places
// inside them: a path holding a hidden place is replaced by its entries,
// recursively, and listed in dirs, which may only be listed (a rule
// cannot take a place back out of a grant). A path that lies inside a
// hidden place was granted on purpose (a worktree in azero's state
// directory) and stays. Paths that do not exist are left out.
func split(paths, hidden []string) (grants, dirs []string) {
	var walk func(p string, top bool)
	walk = func(p string, top bool) {
		if !top && slices.Contains(hidden, p) {
			return
		}
		if info, err := os.Lstat(p); !top && err == nil && info.Mode()&os.ModeSymlink != 0 {
			// A rule on a link would grant what it points to; left out, the
			// link is followed at each access and its target judged on its
			// own, as inside any other grant.
			return
		}
		holds := slices.ContainsFunc(hidden, func(h string) bool { return inside(h, p) && h != p })
		if !holds {
			if exists(p) {
				grants = append(grants, p)
			}
			return
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		dirs = append(dirs, p)
		for _, e := range entries {
			walk(filepath.Join(p, e.Name()), false)
		}
	}
	for _, p := range paths {
		walk(p, true)
	}
	return grants, dirs
}

// dedupe drops repeated paths, keeping the first of each.
func dedupe(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// depth counts a path's components, for ordering mounts parents first.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(filepath.Clean(p), "/")
}
