package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testrun"
)

// page is what every page's layout needs.
type page struct {
	Title   string
	CSRF    string
	Stream  string // the URL of the page's live updates; "" for none
	Waiting int    // gates waiting for a human, for the navigation
	Body    any
}

type errorPage struct {
	Status  int
	Title   string
	Message string
}

var funcs = template.FuncMap{
	"usd": func(v float64) string { return fmt.Sprintf("$%.4f", v) },
	"rfc3339": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.RFC3339)
	},
	"ms":       func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"menuText": func(o human.Option) string { return o.MenuLabel() },
	"inc":      func(i int) int { return i + 1 },
	"list": func() []string {
		return []string{"running", "waiting", "interrupted", "done", "failed", "aborted"}
	},
	// pair hands a partial template two values.
	"pair": func(a, b any) struct{ A, B any } { return struct{ A, B any }{a, b} },
}

// clock is a time of day as the pages show it, with its zone: the zone
// of the server's clock (Options.Location), which a person reading the
// page elsewhere may not share.
func (s *Server) clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(s.opts.Location).Format("15:04:05 MST")
}

// stamp is a date and time as the pages show it, with its zone.
func (s *Server) stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(s.opts.Location).Format("2006-01-02 15:04:05 MST")
}

// render executes the page template name with data into a buffer, then
// writes it: a template error is a 500, never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	p := page{CSRF: s.csrf, Body: data}
	switch d := data.(type) {
	case errorPage:
		p.Title = d.Title
	case titled:
		p.Title, p.Stream = d.title(), d.stream()
	}
	if status != http.StatusUnauthorized {
		p.Waiting = s.countWaiting(r.Context())
	}
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, p); err != nil {
		s.logf("render %s: %v", name, err)
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// titled is page data that names its page and its live stream.
type titled interface {
	title() string
	stream() string
}

// countWaiting counts the runs waiting for a human, for the navigation
// of every page.
func (s *Server) countWaiting(ctx context.Context) int {
	n, err := s.count(ctx, store.Filter{Status: store.StatusWaiting})
	if err != nil {
		return 0
	}
	return n
}

// runRow is a run in the list.
type runRow struct {
	rundoc.View
	Issue   string
	CostUSD float64
	Age     string
	Gate    string // what the run asks, when it does
}

type runsData struct {
	Query       listQuery
	Rows        []runRow
	Fingerprint string
	Total       int
	// Count says which runs are shown of how many.
	Count string
	// Limit is the limit asked for, when not the default (the filter's
	// form keeps it).
	Limit string
	// Newer, Older and Newest are the addresses of the pages around and
	// of the first ("" for none).
	Newer, Older, Newest string
}

func (d runsData) title() string  { return "Runs" }
func (d runsData) stream() string { return listStreamURL(d.Fingerprint, d.Query.at(d.Query.Offset)) }

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	lq, err := queryOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	// Taken before the runs are read: a change while they are is then
	// announced to the page, not folded into what it already waits past.
	fp := s.fingerprint(r.Context(), lq.page())
	l, err := s.list(r.Context(), lq)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := runsData{Query: lq, Fingerprint: fp, Total: l.Total}
	now := s.opts.Now()
	views := s.views(l.Heads, now)
	for i, h := range l.Heads {
		row := runRow{View: views[i], Issue: issueName(h.Issue, h.Slug, h.Filed), CostUSD: h.CostUSD, Age: rundoc.Age(now.Sub(h.CreatedAt))}
		if h.Asks != nil {
			row.Gate = asks(*h.Asks)
		}
		d.Rows = append(d.Rows, row)
	}
	d.Count, d.Newer, d.Older, d.Newest = pages(lq, len(l.Heads), l.Total)
	if lq.Limit != DefaultLimit {
		d.Limit = strconv.Itoa(lq.Limit)
	}
	s.render(w, r, http.StatusOK, "runs", d)
}

type gatesData struct {
	Gates       []gateView
	Fingerprint string
}

func (d gatesData) title() string  { return "Waiting gates" }
func (d gatesData) stream() string { return listStreamURL(d.Fingerprint, "gates=1") }

// gateView is a waiting gate with its form.
type gateView struct {
	Run      rundoc.View
	Issue    string
	Answered bool
	Form     questionView
}

func (s *Server) gatesPage(w http.ResponseWriter, r *http.Request) {
	fp := s.fingerprint(r.Context(), gatesFilter) // before the gates are read, as on the runs page
	gs, err := s.gates(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := gatesData{Fingerprint: fp}
	for _, g := range gs {
		d.Gates = append(d.Gates, gateView{Run: g.Run, Issue: g.issue, Answered: g.Answered, Form: newQuestionView(g.Run.ID, *g.Question, formValues{})})
	}
	s.render(w, r, http.StatusOK, "gates", d)
}

// formValues are what a human typed into an answer form, shown again
// when the answer is refused.
type formValues struct {
	Answer, Feedback, Confirm string
	Files                     map[string]string
	Error                     string
	// QuestionID is the question the form answered.
	QuestionID string
}

// questionView is a question with the form that answers it.
type questionView struct {
	RunID  string
	Q      human.Question
	Report []review.ReportLine
	Values formValues
	// Choose: the options are a menu (a menu, or an editor's options);
	// otherwise the word is typed in full (or the text, for a text
	// question).
	Choose bool
	Text   bool // a text question
	// Words are the options of a word question as the terminal offers
	// them: "Type approve to proceed or reject to stop".
	Words []wordView
	// Feedback is the request for text, when an option needs it, and
	// FeedbackFor the options that need it ("revise", "[R]evise").
	Feedback, FeedbackFor string
	Confirms              []human.Option // options that need a confirmation word
	Files                 []fileField
}

// wordView is an option of a word question: what comes before it (", ",
// " or "), its key and what it does.
type wordView struct {
	Sep, Key, Label string
}

type fileField struct {
	Name, Content string
	Rows          int
}

func newQuestionView(runID string, q human.Question, v formValues) questionView {
	qv := questionView{RunID: runID, Q: q, Values: v,
		Report: classifyReport(q.Report, q.Format == review.ReportFormat || looksLikeDiff(q.Report))}
	qv.Choose = q.Kind == human.Menu || q.Kind == human.Editor && len(q.Options) > 0
	qv.Text = q.Kind == human.Text
	wording := q.Wording()
	var needText []string
	for i, o := range q.Options {
		qv.Words = append(qv.Words, wordView{Sep: separator(i, len(q.Options)), Key: o.Key, Label: wording[i]})
		if o.Text != "" {
			if qv.Feedback == "" {
				qv.Feedback = o.Text
			}
			name := o.Key
			if qv.Choose {
				name = o.MenuLabel()
			}
			needText = append(needText, name)
		}
		if o.Confirm != "" {
			qv.Confirms = append(qv.Confirms, o)
		}
	}
	for i, name := range needText {
		qv.FeedbackFor += separator(i, len(needText)) + name
	}
	for _, f := range q.Files {
		content := f.Content
		if c, ok := v.Files[f.Name]; ok {
			content = c
		}
		qv.Files = append(qv.Files, fileField{Name: f.Name, Content: content, Rows: min(max(strings.Count(content, "\n")+2, 8), 40)})
	}
	return qv
}

// separator is what comes before the i-th of n items said in a row:
// "a, b or c", as the terminal says them.
func separator(i, n int) string {
	switch {
	case i == 0:
		return ""
	case i == n-1:
		return " or "
	}
	return ", "
}

// eventView is one event as the page lists it.
type eventView struct {
	Seq                    int64
	At                     time.Time
	Kind, Tone, Node, Text string
}

// reloads are the events after which a run's page shows a new state.
var reloads = map[event.Kind]bool{event.RunStarted: true, event.Question: true, event.Answer: true, event.Waiting: true,
	event.Interrupted: true, event.Failed: true, event.Finished: true}

// viewEvent says what ev means in a line, as the terminal does.
func viewEvent(ev event.Event) eventView {
	v := eventView{Seq: ev.Seq, At: ev.At, Kind: string(ev.Kind), Tone: string(ev.Tone), Node: ev.Node, Text: ev.Text}
	switch ev.Kind {
	case event.RunStarted:
		v.Text = fmt.Sprintf("run %s %s at %s", ev.RunID, ev.Text, ev.Node)
	case event.NodeStarted:
		v.Text = "▸ " + ev.Node
	case event.NodeDone:
		var d event.NodeDoneData
		_ = ev.Decode(&d)
		v.Text = fmt.Sprintf("✓ %s (%dms) → %s", ev.Node, d.DurationMS, d.Next)
	case event.Waiting:
		v.Text = fmt.Sprintf("◆ %s needs a human answer", ev.Node)
	case event.Interrupted:
		v.Text = fmt.Sprintf("◆ interrupted at %s; the run is saved", ev.Node)
	case event.Failed:
		v.Text = fmt.Sprintf("✗ %s failed: %s", ev.Node, ev.Text)
	case event.Finished:
		var d event.FinishedData
		_ = ev.Decode(&d)
		v.Text = fmt.Sprintf("run %s %s", ev.RunID, d.Status)
		if d.Error != "" {
			v.Text += ": " + d.Error
		}
	case event.Question:
		var q human.Question
		_ = ev.Decode(&q)
		// The report is not in the list of events: the question is said
		// as a list says it.
		v.Text = fmt.Sprintf("? %s asks: %s", ev.Node, asks(askingOf(q)))
	case event.Answer:
		var a human.Answer
		_ = ev.Decode(&a)
		v.Text = fmt.Sprintf("%s answered %s on the %s channel", ev.Node, ev.Text, a.Channel)
		if a.By != "" {
			v.Text += " by " + a.By
		}
	case event.ModelCall:
		var d event.ModelCallData
		_ = ev.Decode(&d)
		v.Text = fmt.Sprintf("%s %s: %d tokens in, %d out, $%.4f", d.Role, d.Model, d.InputTokens, d.OutputTokens, d.CostUSD)
		if d.Error != "" {
			v.Text += ": " + d.Error
		}
	}
	return v
}

// testView is one test run of the run.
type testView struct {
	At       time.Time
	Node     string
	Tone     string
	Text     string
	Result   testrun.Result
	Failures []testrun.Failure
}

// lineageFile is a file of the run's lineage.
type lineageFile struct {
	Path string
	Size int64
}

// trailView is the issue workflow's drafts and verdicts.
type trailView struct {
	Dir             string
	Files           []string
	Draft, Verdict  string
	ReviewerVerdict string
	Iteration       int
	Drafts          int
	Verdicts        int
	Filed           *runs.Filed
}

type runData struct {
	D        rundoc.Detail
	Issue    string
	Question *questionView
	// Answered says an answer was posted and the run has not taken it yet.
	Answered string
	Flash    string
	// Refused is why an answer from this page was not taken, when the
	// form it answered is no longer the one asked.
	Refused string
	Driver  string
	Events  []eventView
	LastSeq int64
	Tests   []testView
	Lineage []lineageFile
	Trail   *trailView
	HasDiff bool
}

func (d runData) title() string { return "Run " + d.D.Run.ID }
func (d runData) stream() string {
	return fmt.Sprintf("/runs/%s/events?after=%d", d.D.Run.ID, d.LastSeq)
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	s.showRun(w, r, http.StatusOK, nil)
}

// showRun renders a run's page; typed, when set, is a refused answer's
// form. What was typed is shown again in the form only when the run still
// asks that very question: typed for another question (the run moved on,
// answered elsewhere), it would stand ready in the next question's form,
// one click from answering what nobody read. The refusal is said above.
func (s *Server) showRun(w http.ResponseWriter, r *http.Request, status int, typed *formValues) {
	d, run, err := s.detail(r, true)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	data := runData{D: d, Issue: issueOf(run), Flash: r.URL.Query().Get("answered")}
	if data.Flash != "" {
		data.Flash = fmt.Sprintf("Your answer %q was accepted.", data.Flash)
	}
	if typed != nil {
		data.Refused = typed.Error
	}
	if d.Question != nil {
		v := formValues{}
		// Only an answer azero made is one; a forged one is not shown.
		prior, answered, _ := s.src.PostedAnswer(run)
		// (A question answered already shows no form.)
		if typed != nil && typed.QuestionID != "" && typed.QuestionID == d.Question.ID && !answered {
			v, data.Refused = *typed, ""
		}
		qv := newQuestionView(run.ID, *d.Question, v)
		data.Question = &qv
		if answered {
			data.Answered = "answered" + answeredOn(prior) + "; the run continues with that answer"
		}
	}
	switch {
	case s.isDriving(run.ID):
		data.Driver = "azero serve is driving this run"
	case s.src.LeaseLive(run) && run.Lease.PID == 0:
		// A run on Temporal: its lease names the worker holding it.
		data.Driver = fmt.Sprintf("driven by azero on %s", run.Lease.Host)
	case s.src.LeaseLive(run):
		data.Driver = fmt.Sprintf("driven by azero (pid %d on %s)", run.Lease.PID, run.Lease.Host)
	}
	for _, ev := range d.Events {
		data.Events = append(data.Events, viewEvent(ev))
		data.LastSeq = ev.Seq
		if ev.Kind == event.TestResult {
			tv := testView{At: ev.At, Node: ev.Node, Tone: string(ev.Tone), Text: ev.Text}
			if ev.Decode(&tv.Result) == nil {
				tv.Failures = tv.Result.Failures[:min(len(tv.Result.Failures), 10)]
			}
			data.Tests = append(data.Tests, tv)
		}
	}
	data.D.Events = nil
	data.Lineage = listLineage(d.LineageDir)
	sum := s.opts.Runs.Workflows().Summary(run)
	data.Trail = trailOf(sum.Trail)
	data.HasDiff = sum.Change || d.Question != nil && looksLikeDiff(d.Question.Report)
	s.render(w, r, status, "run", data)
}

// isDriving says the service continues the run in this process.
func (s *Server) isDriving(id string) bool { return slices.Contains(s.opts.Runs.Driving(), id) }

func (s *Server) lineageDir(runID string) string {
	if s.opts.StateDir == "" {
		return ""
	}
	return filepath.Join(s.opts.StateDir, "runs", runID)
}

// maxListed bounds the lineage files a page lists.
const maxListed = 500

func listLineage(dir string) []lineageFile {
	if dir == "" {
		return nil
	}
	var out []lineageFile
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || len(out) >= maxListed {
			return fs.SkipDir
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			info, _ := e.Info()
			var size int64
			if info != nil {
				size = info.Size()
			}
			out = append(out, lineageFile{Path: filepath.ToSlash(rel), Size: size})
		}
		return nil
	})
	return out
}

// trailOf is what the page shows of a governance run's drafts and
// verdicts (its workflow's summary): the state's current ones and the
// trail's files; nil for a run that keeps none.
func trailOf(t *runs.Trail) *trailView {
	if t == nil {
		return nil
	}
	return &trailView{Dir: t.Dir, Files: t.Files(), Draft: t.Draft, Verdict: t.Verdict, ReviewerVerdict: t.ReviewerVerdict,
		Iteration: t.Iteration, Drafts: t.Drafts, Verdicts: t.Verdicts, Filed: t.Filed}
}

// fileData is a file shown in a page.
type fileData struct {
	RunID   string
	Name    string
	Where   string // what the file belongs to: "lineage", "trail"
	Content string
	Lines   []review.ReportLine
	Note    string
}

func (d fileData) title() string  { return d.Name }
func (d fileData) stream() string { return "" }

// maxShown bounds a file shown in a page.
const maxShown = 2 << 20

// readConfined reads name inside dir, refusing anything that leads out of
// it (.., absolute paths, symbolic links pointing out).
func readConfined(dir, name string) (string, string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", "", refuse(http.StatusNotFound, "nothing is kept for this run")
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(name))
	if err != nil {
		return "", "", refuse(http.StatusNotFound, "no file %q here", name)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return "", "", refuse(http.StatusNotFound, "%q is not a file", name)
	}
	b := make([]byte, min(info.Size(), maxShown))
	n, err := f.Read(b)
	if err != nil && n == 0 && len(b) > 0 {
		return "", "", fmt.Errorf("read %s: %w", name, err)
	}
	b = b[:n]
	note := ""
	if info.Size() > maxShown {
		note = fmt.Sprintf("only the first %d of %d bytes are shown", maxShown, info.Size())
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return "", fmt.Sprintf("a binary file of %d bytes", info.Size()), nil
	}
	return string(b), note, nil
}

func (s *Server) lineagePage(w http.ResponseWriter, r *http.Request) {
	run, err := s.src.FindRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	name := r.PathValue("path")
	content, note, err := readConfined(s.lineageDir(run.ID), name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	diff := strings.HasSuffix(name, ".patch") || strings.HasSuffix(name, ".diff") || looksLikeDiff(content)
	s.render(w, r, http.StatusOK, "file", fileData{RunID: run.ID, Name: name, Where: "lineage", Note: note,
		Lines: classifyReport(content, diff)})
}

func (s *Server) trailPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.src.FindRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	trail := s.opts.Runs.Workflows().Summary(run).Trail
	if trail == nil || trail.Dir == "" {
		s.fail(w, r, http.StatusNotFound, "run "+run.ID+" has no audit trail")
		return
	}
	name := r.PathValue("name")
	content, note, err := readConfined(trail.Dir, name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "file", fileData{RunID: run.ID, Name: name, Where: "audit trail", Note: note,
		Lines: classifyReport(content, false)})
}

// diffData is the diff page.
type diffData struct {
	RunID  string
	Source string // where the diff comes from
	Lines  []review.ReportLine
	Empty  string
}

func (d diffData) title() string  { return "Diff of run " + d.RunID }
func (d diffData) stream() string { return "" }

// diffPage shows the full diff with the gate's banners: the report of the
// question waiting now, else the change in the run's worktree as the diff
// review would show it now, else the last diff report a gate asked about,
// else the patch the run kept.
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, err := s.src.FindRun(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := diffData{RunID: run.ID}
	show := func(source, report string) {
		d.Source, d.Lines = source, classifyReport(report, true)
		s.render(w, r, http.StatusOK, "diff", d)
	}
	if q, _ := rundoc.Question(run); q != nil && (q.Format == review.ReportFormat || looksLikeDiff(q.Report)) {
		show("the report of the question waiting at "+q.Gate, q.Report)
		return
	}
	sum := s.opts.Runs.Workflows().Summary(run)
	if sum.Change && !run.Status.Finished() && sum.Worktree != "" {
		if info, err := os.Stat(sum.Worktree); err == nil && info.IsDir() {
			if report, err := runs.ChangeReport(ctx, sum.Worktree, sum.Base); err == nil {
				show("the worktree "+sum.Worktree+" now, as the diff review shows it", report)
				return
			}
		}
	}
	evs, err := s.src.Events(ctx, run.ID, 0, 0)
	if err == nil {
		for i := len(evs) - 1; i >= 0; i-- {
			var q human.Question
			if evs[i].Kind == event.Question && evs[i].Decode(&q) == nil && (q.Format == review.ReportFormat || looksLikeDiff(q.Report)) {
				show(fmt.Sprintf("the report %s showed at %s", q.Gate, s.stamp(q.AskedAt)), q.Report)
				return
			}
		}
	}
	if sum.Patch != "" {
		if content, _, err := readConfined(s.lineageDir(run.ID), sum.Patch); err == nil {
			show("the patch kept in the run's lineage ("+sum.Patch+")", content)
			return
		}
	}
	d.Empty = "This run has no diff to show yet."
	s.render(w, r, http.StatusOK, "diff", d)
}

// formAnswer is POST /runs/RUN/answer, the page's form.
func (s *Server) formAnswer(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, r, http.StatusRequestEntityTooLarge, "the answer is too large")
			return
		}
		s.fail(w, r, http.StatusBadRequest, "the form could not be read: "+err.Error())
		return
	}
	req := AnswerRequest{Gate: r.PostFormValue("gate"), Answer: r.PostFormValue("answer"), Feedback: r.PostFormValue("feedback"),
		Confirm: r.PostFormValue("confirm"), QuestionID: r.PostFormValue("question_id")}
	typed := formValues{Answer: req.Answer, Feedback: req.Feedback, Confirm: req.Confirm, QuestionID: req.QuestionID}
	for k, v := range r.PostForm {
		if name, ok := strings.CutPrefix(k, "file:"); ok && len(v) > 0 {
			if req.Files == nil {
				req.Files, typed.Files = map[string]string{}, map[string]string{}
			}
			// Browsers send text areas with CRLF line endings.
			req.Files[name] = strings.ReplaceAll(v[0], "\r\n", "\n")
			typed.Files[name] = req.Files[name]
		}
	}
	req.Feedback = strings.ReplaceAll(req.Feedback, "\r\n", "\n")
	res, err := s.answer(r.Context(), r.PathValue("id"), req, clientOf(r, human.ChannelWeb))
	if err != nil {
		status := statusOf(err)
		if status == http.StatusNotFound || status == http.StatusInternalServerError {
			s.failErr(w, r, err)
			return
		}
		typed.Error = err.Error()
		s.showRun(w, r, status, &typed)
		return
	}
	shown := res.Answer
	if r := []rune(shown); len(r) > 60 {
		shown = string(r[:57]) + "..."
	}
	http.Redirect(w, r, "/runs/"+res.RunID+"?answered="+url.QueryEscape(shown), http.StatusSeeOther)
}
