package sandbox

import (
	"slices"
	"strings"
)

// SeatbeltPolicy is what a macOS Seatbelt profile lets a command touch.
type SeatbeltPolicy struct {
	Read    []string // read and execute, recursively
	Write   []string // read, write and execute, recursively
	Deny    []string // neither, even inside Read or Write (the credential places)
	Network bool     // any network; without it only localhost
}

// seatbeltRoots are the parts of macOS a command may read.
var seatbeltRoots = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library", "/private/etc", "/private/var/db/timezone",
	"/private/var/db/dyld", "/opt", "/nix", "/Applications/Xcode.app", "/Library/Developer/CommandLineTools",
}

// seatbeltServices are the system services a command may talk to: name
// lookups, logging, notifications (not the keychain).
var seatbeltServices = []string{
	"com.apple.system.opendirectoryd.libinfo", "com.apple.system.DirectoryService.libinfo_v1",
	"com.apple.system.logger", "com.apple.logd", "com.apple.system.notification_center",
	"com.apple.CoreServices.coreservicesd", "com.apple.FSEvents", "com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent",
}

// SeatbeltProfile writes the SBPL profile sandbox-exec -p applies for p:
// everything denied but running programs, reading the system and p.Read,
// writing p.Write, the few devices and services programs need, and the
// network to localhost (all of it with p.Network). p.Deny comes last, so
// it wins over every grant.
func SeatbeltProfile(p SeatbeltPolicy) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork)\n")
	b.WriteString("(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow ipc-posix-shm* ipc-posix-sem)\n")
	b.WriteString("(allow file-read-metadata)\n")
	b.WriteString("(allow mach-lookup")
	for _, s := range seatbeltServices {
		b.WriteString(" (global-name " + sbplString(s) + ")")
	}
	b.WriteString(")\n")
	rule(&b, "(allow file-read* file-write-data", []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/dtracehelper"}, "literal")
	rule(&b, "(allow file-read*", slices.Concat(seatbeltRoots, p.Read), "subpath")
	rule(&b, "(allow file-read* file-write*", p.Write, "subpath")
	if p.Network {
		b.WriteString("(allow network*)\n")
	} else {
		b.WriteString("(allow network-outbound (remote ip \"localhost:*\"))\n")
		b.WriteString("(allow network-inbound network-bind (local ip \"localhost:*\"))\n")
		b.WriteString("(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))\n")
	}
	rule(&b, "(deny file-read* file-write*", p.Deny, "subpath")
	return b.String()
}

// rule writes one rule over paths, with the filter kind (subpath or
// literal); nothing when there are none.
func rule(b *strings.Builder, head string, paths []string, kind string) {
	if len(paths) == 0 {
		return
	}
	b.WriteString(head)
	for _, p := range dedupe(paths) {
		b.WriteString("\n  (" + kind + " " + sbplString(p) + ")")
	}
	b.WriteString(")\n")
}

// sbplString quotes s as an SBPL (Scheme) string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
