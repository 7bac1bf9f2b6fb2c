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
	b.WriteString(".SH EXIT STATUS\n")
	for _, ec := range commandExitCodes(c) {
		fmt.Fprintf(&b, ".TP\n\\fB%d\\fP\n%s\n", ec.Code, roffText(ec.Text))
	}
	b.WriteString(".SH ENVIRONMENT\n")
	for _, v := range environment {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", roffText(strings.ReplaceAll(v.Names, "`", "")), roffText(strings.ReplaceAll(v.Meaning, "`", "")))
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

// environment is the README's table of the variables azero reads, row by
// row as the README writes them (a test keeps the two the same), for the
// man pages.
var environment = []struct{ Names, Meaning string }{
	{"`AZERO_STATE_DIR`", "where the store, run lineage and audit log live; default `$XDG_STATE_HOME/azero` (`~/.local/state/azero`)"},
	{"`XDG_CONFIG_HOME`", "where your config is read: `$XDG_CONFIG_HOME/azero/config.toml` (default `~/.config/azero/config.toml`)"},
	{"`AZERO_MOCK_LLM=1`", "every model role uses the offline scripted model (a run records the model it uses: resuming it later without the variable keeps it)"},
	{"`AZERO_MOCK_SCRIPT`", "the scripted model's replies (a TOML file; see \"Trying azero without a model\")"},
	{"`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`", "Claude"},
	{"`GEMINI_API_KEY` (or `GOOGLE_API_KEY`), `GOOGLE_GEMINI_BASE_URL`", "Gemini"},
	{"`OPENAI_API_KEY`, `OPENAI_BASE_URL`", "any OpenAI-compatible server"},
	{"`GITHUB_TOKEN` (or `GH_TOKEN`), `GITHUB_API_URL`", "filing issues on GitHub or GitHub Enterprise"},
	{"`TEMPORAL_API_KEY`", "a Temporal Cloud API key for `--engine temporal` and `azero worker` (turns TLS on; never read from a file or a flag)"},
	{"`CLAUDE_CONFIG_DIR`", "where `azero hook claude-code --install --user` finds Claude Code's `settings.json` (default `~/.claude`)"},
	{"`AZERO_EDITOR`, `GIT_EDITOR`, `VISUAL`, `EDITOR`", "the editor for human edits, in this order (fallback `code --wait` if present, then `vi`)"},
	{"`AZERO_PAGER`, `PAGER`", "the pager for long output on a terminal (default `less`, with `LESS=FRX` unless set; never when piped; `cat` for none)"},
	{"`NO_COLOR`", "no colour (wins over everything)"},
	{"`CLICOLOR=0`, `CLICOLOR_FORCE=1`", "no colour; colour even when piped"},
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
