package cli

import (
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/review"
)

// renderer prints a run's events on the terminal: each step as it starts
// and ends, what the nodes report, and each question's report before the
// terminal asks it.
func renderer(io *iostreams.IOStreams) func(event.Event) {
	cs := io.ColorScheme()
	return func(ev event.Event) {
		fmt.Fprint(io.ErrOut, renderEvent(ev, cs))
	}
}

// renderEvent is one event as the terminal shows it ("" for none).
func renderEvent(ev event.Event, cs iostreams.ColorScheme) string {
	switch ev.Kind {
	case event.RunStarted:
		return fmt.Sprintf("%s run %s at %s\n", cs.Faint("azero:"), cs.Bold(ev.RunID), ev.Node)
	case event.NodeStarted:
		return fmt.Sprintf("%s %s\n", cs.Cyan("▸"), ev.Node)
	case event.NodeDone:
		var d event.NodeDoneData
		_ = ev.Decode(&d)
		took := fmt.Sprintf("(%dms)", d.DurationMS)
		if d.Worker != "" {
			took = fmt.Sprintf("(%dms on %s)", d.DurationMS, d.Worker)
		}
		return fmt.Sprintf("%s %s %s\n", cs.Green("✓"), ev.Node, cs.Faint(took))
	case event.Waiting:
		return fmt.Sprintf("%s %s needs a human answer\n", cs.Yellow("⏸"), ev.Node)
	case event.Interrupted:
		return fmt.Sprintf("%s interrupted at %s; the run is saved\n", cs.Yellow("⏸"), ev.Node)
	case event.Failed:
		return fmt.Sprintf("%s %s failed\n", cs.Red("✗"), ev.Node)
	case event.Finished:
		var d event.FinishedData
		_ = ev.Decode(&d)
		return fmt.Sprintf("%s run %s %s\n", cs.Faint("azero:"), ev.RunID, d.Status)
	case event.Question:
		var q human.Question
		if ev.Decode(&q) != nil {
			return ""
		}
		return renderQuestion(q, cs)
	case event.Answer:
		var a human.Answer
		if ev.Decode(&a) != nil || a.Channel == human.ChannelTerminal {
			return ""
		}
		if a.Channel == human.ChannelUnattended {
			return fmt.Sprintf("%s: %s (nothing needs a human, and nobody can be asked here)\n", ev.Node, ev.Text)
		}
		return fmt.Sprintf("%s answered %s on the %s channel %s\n", ev.Node, ev.Text, a.Channel, a.By)
	case event.ModelCall:
		if ev.Tone != event.Bad {
			return "  " + cs.Faint(ev.Text) + "\n"
		}
	}
	bullet := ""
	switch ev.Tone {
	case event.Good:
		bullet = cs.Green("●") + " "
	case event.Bad:
		bullet = cs.Red("●") + " "
	case event.Warn:
		bullet = cs.Yellow("●") + " "
	}
	return "  " + bullet + ev.Text + "\n"
}

// renderQuestion shows what the human must read before answering: the
// headline and the report (a diff report coloured as the gate colours it).
func renderQuestion(q human.Question, cs iostreams.ColorScheme) string {
	var b strings.Builder
	if q.Title != "" {
		title := cs.Bold(q.Title)
		if strings.HasPrefix(q.Title, "NEEDS YOU: ") {
			title = cs.Alert(" NEEDS YOU ") + " " + strings.TrimPrefix(q.Title, "NEEDS YOU: ")
		}
		fmt.Fprintf(&b, "\n%s\n", title)
	}
	if q.Report != "" {
		report := q.Report
		if q.Format == review.ReportFormat {
			report = review.ColorizeReport(report, cs)
		}
		b.WriteString(strings.TrimRight(report, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
