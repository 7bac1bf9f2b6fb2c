package store

import (
	"context"
	"fmt"
	"time"
)

// Mark is where a look for changes (Changes) stopped: the newest event's
// sequence number and the newest updated_at seen.
type Mark struct {
	Event   int64
	Updated int64
}

// Changes is what changed in the store since a Mark.
type Changes struct {
	// Events maps each run with events newer than the mark to its newest
	// event's sequence number.
	Events map[string]int64
	// Updated maps each run whose row was written at or after the mark's
	// updated_at less the slack to its updated_at: the caller tells the
	// writes it saw already from new ones.
	Updated map[string]int64
	// Running are the runs whose status is running, with their lease and
	// nothing else: whether such a run is shown as running depends on its
	// lease, which changes without a write of its row.
	Running []Run
	// Mark is where the next look starts.
	Mark Mark
}

// ChangeSlack is how far back before its mark's updated_at a look for
// changes reads: updated_at is taken before the write commits, so a write
// of another process can land with a time before the newest one seen.
const ChangeSlack = 5 * time.Second

// Changes returns what changed since m, in one query over indexed columns
// (a look that finds nothing reads no run's row): the runs with new
// events, the runs written since (ChangeSlack before m.Updated), and the
// running runs' leases. From the zero Mark, every run and event is new.
func (s *Store) Changes(ctx context.Context, m Mark) (Changes, error) {
	from := m.Updated - int64(ChangeSlack)
	rows, err := s.db.QueryContext(ctx, `SELECT 'e', run_id, MAX(id), 0, '', 0 FROM events WHERE id > ? GROUP BY run_id
		UNION ALL SELECT 'u', id, updated_at, 0, '', 0 FROM runs WHERE updated_at > ?
		UNION ALL SELECT 'r', id, lease_until, lease_pid, lease_host, lease_token != '' FROM runs WHERE status = 'running'`, m.Event, from)
	if err != nil {
		return Changes{}, fmt.Errorf("look for changes: %w", err)
	}
	defer rows.Close()
	c := Changes{Events: map[string]int64{}, Updated: map[string]int64{}, Mark: m}
	for rows.Next() {
		var (
			kind, id, host string
			n, pid, held   int64
		)
		if err := rows.Scan(&kind, &id, &n, &pid, &host, &held); err != nil {
			return Changes{}, fmt.Errorf("look for changes: %w", err)
		}
		switch kind {
		case "e":
			c.Events[id] = n
			c.Mark.Event = max(c.Mark.Event, n)
		case "u":
			c.Updated[id] = n
			c.Mark.Updated = max(c.Mark.Updated, n)
		case "r":
			r := Run{ID: id, Status: StatusRunning, Lease: Lease{PID: int(pid), Host: host}}
			if held != 0 {
				r.Lease.Token = "held" // not the token: LeaseLive only asks whether there is one
			}
			if n != 0 {
				r.Lease.Until = time.Unix(0, n)
			}
			c.Running = append(c.Running, r)
		}
	}
	return c, rows.Err()
}
