package runs

import (
	"context"

	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/workflow/demo"
)

// The demo is an implementation run on a small embedded Go project, with
// the offline scripted model as its coder.

// DemoDesign is the demo's design document, in its project.
const DemoDesign = demo.Design

// DemoSetup is a demo ready to run: its project's repository, the design
// document in it, and the scripted coder's replies (beside the project,
// not part of the change under review).
type DemoSetup = demo.Setup

// PrepareDemo writes the demo's project into a new git repository in
// base, through w.
func PrepareDemo(ctx context.Context, w *safewrite.Writer, base string) (DemoSetup, error) {
	return demo.Prepare(ctx, w, base)
}
