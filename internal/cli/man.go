package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// writeManPages writes one man page (section 1, roff) per command of the
// tree under root into dir and returns how many it wrote. Hidden and help
// commands have none.
func writeManPages(root *cobra.Command, version, dir string) (int, error) {
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(manPage(c, version)), 0o644); err != nil {
			return err
		}
		n++
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return n, walk(root)
}

// manPage renders one command's page: name, synopsis, description,
// options, inherited options, examples, and the related commands.
func manPage(c *cobra.Command, version string) string {
	var b strings.Builder
	path := c.CommandPath()
	fmt.Fprintf(&b, ".TH %q \"1\" \"\" %q \"azero manual\"\n", strings.ToUpper(strings.ReplaceAll(path, " ", "-")), "azero "+version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffText(strings.ReplaceAll(path, " ", "-")), roffText(c.Short))
	b.WriteString(".SH SYNOPSIS\n.nf\n" + roffText(c.UseLine()) + "\n.fi\n")
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n.nf\n" + roffText(strings.TrimSpace(desc)) + "\n.fi\n")
	manFlags(&b, "OPTIONS", c.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.nf\n" + roffText(c.Example) + "\n.fi\n")
	}
	var see []string
	if c.HasParent() {
		see = append(see, c.Parent().CommandPath())
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			see = append(see, sub.CommandPath())
		}
	}
	if len(see) > 0 {
		slices.Sort(see)
		for i, s := range see {
			see[i] = "\\fB" + roffText(strings.ReplaceAll(s, " ", "-")) + "\\fP(1)"
		}
		b.WriteString(".SH SEE ALSO\n" + strings.Join(see, ", ") + "\n")
	}
	return b.String()
}

// manFlags writes a section listing flags, if there are any visible.
func manFlags(b *strings.Builder, title string, fs *pflag.FlagSet) {
	first := true
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if first {
			b.WriteString(".SH " + title + "\n")
			first = false
		}
		b.WriteString(".TP\n")
		if f.Shorthand != "" {
			b.WriteString("\\fB\\-" + roffText(f.Shorthand) + "\\fP, ")
		}
		b.WriteString("\\fB\\-\\-" + roffText(f.Name) + "\\fP")
		if f.Value.Type() != "bool" {
			b.WriteString(" \\fI" + roffText(f.Value.Type()) + "\\fP")
		}
		usage := f.Usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		b.WriteString("\n" + roffText(usage) + "\n")
	})
}

// roffText escapes text for roff: backslashes, and a line starting with a
// control character (. or ') that would be read as a request.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
