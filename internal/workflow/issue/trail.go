package issue

import "github.com/azero-dev/azero/internal/workflow/governance"

// The audit trail is the governance workflows' (package governance): the
// names below are the issue workflow's view of it.

// Kinds of audit trail files an issue run writes.
const (
	KindBrief         = governance.KindBrief         // the human's brief, copied at N0
	KindDraft         = governance.KindDraft         // a drafter reply, as the model wrote it
	KindDraftEdited   = governance.KindDraftEdited   // the draft after the human edited it
	KindFeedback      = governance.KindFeedback      // the human's feedback asking for a revision
	KindVerdict       = governance.KindVerdict       // a reviewer reply, as the model wrote it
	KindVerdictEdited = governance.KindVerdictEdited // the verdict after the human sanitised it
	KindFiled         = governance.KindFiled         // the filing record (number, URL, title, labels, time)
)

// Entry is one file of an audit trail.
type Entry = governance.Entry

// Trail is a run's audit directory inside the repository.
type Trail = governance.Trail

// ParseEntry recognises a trail file name (governance.ParseEntry).
func ParseEntry(name string) (Entry, bool) { return governance.ParseEntry(name) }

// EntryName returns the file name of entry n of kind.
func EntryName(n int, kind string) string { return governance.EntryName(n, kind) }

// Last returns the trail's last entry, and false when it is empty.
func Last(entries []Entry) (Entry, bool) { return governance.Last(entries) }

// Count returns how many entries are of kind.
func Count(entries []Entry, kind string) int { return governance.Count(entries, kind) }
