// Command benchserve measures a real azero serve under the load of issue
// 25: a store of 1,000 runs (180 waiting at a diff review), 200 open live
// streams (/events), the CPU share of the serve process while they idle
// (from /proc/PID/stat), and the latency of GET / at 16 concurrent
// clients with the streams open. It prints the figures against the
// targets (200 streams under 5% of a core, / under 100 ms p99) and exits
// 1 when one is missed. scripts/bench-serve.sh builds azero and runs it.
//
//	benchserve -azero PATH [-runs 1000] [-waiting 180] [-streams 200] [-idle 30s] [-clients 16] [-requests 400]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

func main() {
	azero := flag.String("azero", "", "the azero binary to serve with")
	nRuns := flag.Int("runs", 1000, "runs in the store")
	nWaiting := flag.Int("waiting", 180, "of them waiting at a diff review")
	nStreams := flag.Int("streams", 200, "live streams (/events) to open")
	idle := flag.Duration("idle", 30*time.Second, "how long to measure the idle streams' CPU")
	clients := flag.Int("clients", 16, "concurrent clients of GET /")
	requests := flag.Int("requests", 400, "requests of GET / in all")
	flag.Parse()
	if *azero == "" {
		fmt.Fprintln(os.Stderr, "benchserve: -azero PATH is required")
		os.Exit(2)
	}
	ok, err := run(*azero, *nRuns, *nWaiting, *nStreams, *idle, *clients, *requests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserve:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(azero string, nRuns, nWaiting, nStreams int, idle time.Duration, clients, requests int) (bool, error) {
	work, err := os.MkdirTemp("", "benchserve")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	state := filepath.Join(work, "state")
	fmt.Printf("bench: a store of %d runs, %d waiting\n", nRuns, nWaiting)
	if err := fill(filepath.Join(state, store.FileName), nRuns, nWaiting); err != nil {
		return false, err
	}
	token := strings.Repeat("b3nch", 10)
	tokenFile := filepath.Join(work, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		return false, err
	}
	addr, err := freeAddr()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, azero, "serve", "--addr", addr, "--token-file", tokenFile)
	cmd.Env = append(os.Environ(), "AZERO_STATE_DIR="+state, "XDG_CONFIG_HOME="+filepath.Join(work, "config"), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return false, err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	base := "http://" + addr
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	get := func(path string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for deadline := time.Now().Add(time.Minute); ; {
		if code, err := get("/api/runs?limit=1"); err == nil && code == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			return false, fmt.Errorf("azero serve did not answer on %s: %d %v", addr, code, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The streams: each its own connection, as each browser tab's is.
	fmt.Printf("bench: opening %d live streams (/events of the runs page)\n", nStreams)
	var opened sync.WaitGroup
	for i := range nStreams {
		opened.Add(1)
		go func() {
			tr := &http.Transport{}
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/events?since=start", nil)
			if i%4 == 1 {
				req, _ = http.NewRequestWithContext(ctx, "GET", base+"/events?since=start&gates=1", nil)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := tr.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				fmt.Fprintf(os.Stderr, "bench: stream %d: %v\n", i, err)
				opened.Done()
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			first := true
			for sc.Scan() {
				if first && strings.HasPrefix(sc.Text(), "event: changed") {
					first = false
					opened.Done()
				}
			}
			if first {
				opened.Done()
			}
		}()
	}
	opened.Wait()
	time.Sleep(2 * time.Second) // the streams settle

	pid := cmd.Process.Pid
	before, err := cpuTicks(pid)
	if err != nil {
		return false, err
	}
	start := time.Now()
	fmt.Printf("bench: measuring the serve process's CPU for %s with the streams idle\n", idle)
	time.Sleep(idle)
	after, err := cpuTicks(pid)
	if err != nil {
		return false, err
	}
	share := float64(after-before) / clkTck / time.Since(start).Seconds()

	// GET / at 16 clients, the streams still open, then GET /api/runs
	// the same way: the page's cost against the API's over the same rows
	// and under the same load tells the page's share from the machine's.
	load := loadAvg()
	t0, _ := cpuTicks(pid)
	p50, p99, err := latencies(get, "/", clients, requests)
	if err != nil {
		return false, err
	}
	t1, _ := cpuTicks(pid)
	a50, a99, err := latencies(get, "/api/runs", clients, requests)
	if err != nil {
		return false, err
	}
	t2, _ := cpuTicks(pid)
	// The serve process's CPU per request (warm-ups included): what the
	// machine's load does not change.
	perPage := float64(t1-t0) / clkTck * 1000 / float64(requests+5)
	perAPI := float64(t2-t1) / clkTck * 1000 / float64(requests+5)

	ok := true
	verdict := func(pass bool) string {
		if pass {
			return "ok"
		}
		ok = false
		return "MISSED"
	}
	fmt.Printf("%d idle streams: serve used %.2f%% of a core (target < 5%%)  %s\n", nStreams, share*100, verdict(share < 0.05))
	fmt.Printf("GET / at %d clients, %d runs: p50 %.1f ms, p99 %.1f ms (target p99 < 100 ms, ratio %.2f)  %s\n",
		clients, nRuns, ms(p50), ms(p99), ms(p99)/100, verdict(p99 < 100*time.Millisecond))
	fmt.Printf("GET /api/runs at %d clients: p50 %.1f ms, p99 %.1f ms (the page costs %.2fx the API at p50, %.2fx at p99)\n",
		clients, ms(a50), ms(a99), ms(p50)/ms(a50), ms(p99)/ms(a99))
	fmt.Printf("serve's CPU per request: GET / %.1f ms, GET /api/runs %.1f ms\n", perPage, perAPI)
	fmt.Printf("load average before the requests: %s; after: %s (2 shared cores)\n", load, loadAvg())
	return ok, nil
}

// latencies requests path requests times from clients concurrent clients
// and returns the p50 and p99 of their latencies.
func latencies(get func(string) (int, error), path string, clients, requests int) (p50, p99 time.Duration, err error) {
	for range 5 {
		_, _ = get(path) // warm-up
	}
	lat := make([]time.Duration, 0, requests)
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan struct{}, requests)
	for range requests {
		jobs <- struct{}{}
	}
	close(jobs)
	var failed error
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				t0 := time.Now()
				code, err := get(path)
				d := time.Since(t0)
				mu.Lock()
				if err != nil || code != http.StatusOK {
					failed = fmt.Errorf("GET %s = %d, %v", path, code, err)
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return 0, 0, failed
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes, from
// /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// clkTck is the kernel's clock ticks per second of /proc/PID/stat (USER_HZ:
// 100 on every Linux architecture azero builds for).
const clkTck = 100

// cpuTicks is the process's user and system time, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from its ")".
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return utime + stime, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// fill makes the store: n runs, the newest waiting of them at a diff
// review whose report shows a long diff, each with a few model calls and
// a state of a few kilobytes (as internal/web's benchmarks).
func fill(path string, n, waiting int) error {
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	state, _ := json.Marshal(map[string]any{"issue": "#42", "repo": "/tmp/repo", "lld": strings.Repeat("a design line\n", 400)})
	report := "## Diff\n" + strings.Repeat("+a line the coder added to the file\n", 1000)
	start := time.Now().Add(-time.Hour)
	for i := range n {
		id := fmt.Sprintf("250301-%06d", i)
		if err := st.CreateRun(ctx, store.Run{ID: id, Workflow: "implement", Node: "work", State: state}); err != nil {
			return err
		}
		for c := range 3 {
			if err := st.RecordCall(ctx, store.Call{RunID: id, Node: "code", Role: "coder", Model: "mock:scripted", InputTokens: 1000,
				OutputTokens: 200, CostUSD: 0.01, At: start.Add(time.Duration(c) * time.Second)}); err != nil {
				return err
			}
		}
		cp := store.Checkpoint{RunID: id, Token: "t-" + id, Node: "work", Next: "review", Status: store.StatusDone, Outcome: "done",
			Steps: 5, Started: start, Finished: start}
		if i >= n-waiting {
			q := human.Question{Gate: "diff_review", Kind: human.Word, Title: "Diff review", Format: "diff-report", Report: report,
				Prompt:  "!! 1 file is flagged above. Commit the changes to 3 files? Nothing is committed unless you type approve.",
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}},
				Facts:   map[string]any{"flagged_files": []string{"textkit/slug.go"}}, AskedAt: start}
			q.ID = human.Fingerprint(q)
			raw, _ := json.Marshal(q)
			cp.Status, cp.Outcome, cp.Next, cp.Question = store.StatusWaiting, "waiting", "diff_review", raw
		}
		if err := st.Acquire(ctx, id, store.Lease{Token: cp.Token, PID: -1}, time.Minute); err != nil {
			return err
		}
		if err := st.Checkpoint(ctx, cp); err != nil {
			return err
		}
		if err := st.Release(ctx, id, cp.Token); err != nil {
			return err
		}
	}
	return nil
}
