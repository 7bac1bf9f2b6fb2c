package runs

import (
	"context"
	"time"

	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// selftestWorkflow exercises the engine: checkpointed work steps, a
// gate, resume.
func selftestWorkflow() Workflow {
	return Define(Spec[selftest.State, selftest.Deps]{
		Name:  selftest.Name,
		Graph: selftest.Graph,
		Deps: func(ctx context.Context, env *Env, run Run, s *selftest.State) (selftest.Deps, error) {
			w, err := env.Writer(false, false, run.Approver)
			if err != nil {
				return selftest.Deps{}, err
			}
			return selftest.Deps{Writer: w}, nil
		},
	})
}

// SelftestEffects is the file in a self-test's directory where each of
// its steps appends a line.
const SelftestEffects = selftest.EffectsFile

// PrepareSelftest makes a self-test run of steps work steps of delay
// each in dir, to be started and followed from t.
func PrepareSelftest(dir string, steps int, delay time.Duration, t Terminal) *Prepared {
	wf, _ := Catalog().Lookup(selftest.Name)
	return &Prepared{wf: wf, state: &selftest.State{Dir: dir, Steps: steps, Delay: delay},
		meta: map[string]string{"dir": dir}, term: t}
}
