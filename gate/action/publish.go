package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Publication is what a gate run publishes.
type Publication struct {
	Scenario     string              // the scenario's name: one comment per scenario
	ScenarioFile string              // the scenario file, relative to the repository: annotations point at it
	Verdict      verdict.Verdict     // the verdict; its value and workloads give outputs and annotations
	Accepted     *verdict.Acceptance // the failing verdict accepted by label (exit 0); nil when not
	Markdown     string              // the Markdown summary (report.CompareSummary): summary and comment
	ReportPath   string              // the report file: the report output
	CommentPath  string              // the file holding Markdown, in ResultsDir: the fork comment workflow's comment ("": ReportPath)
	ResultsDir   string              // the results directory: the results-dir output; the manifest goes there
	Baseline     string              // the baseline output (BaselineUse)
}

// Outcome is what Publish did; Notices and Warnings were also printed.
type Outcome struct {
	ExitCode       int      // ExitCode(p.Verdict, in.FailOn): the step's exit code
	Regressions    []string // Regressions(p.Verdict)
	SummaryCut     bool     // the step summary was cut to SummaryLimit
	CommentID      int64    // the pull request comment, 0 when none
	CommentCreated bool     // created (else edited, or unchanged)
	CommentAction  string   // Created, Edited or Unchanged ("" when no comment)
	CommentAuthor  Self     // whom the comment is by
	CommentRemoved []int64  // our own duplicate comments deleted
	CommentCut     bool     // the comment was cut to CommentLimit
	Notices        []string // why something was skipped: no token, not a pull request, 403, …
	Warnings       []string // what failed without failing the step (a 5xx while commenting)
}

func (o *Outcome) notice(a *githubactions.Action, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.Notices = append(o.Notices, msg)
	a.Noticef("%s", msg)
}

func (o *Outcome) warning(a *githubactions.Action, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.Warnings = append(o.Warnings, msg)
	a.Warningf("%s", msg)
}

// Publish writes the gate step's manifest, step summary, outputs and annotations, no comment.
// The error is for a file not written: exit Outcome.ExitCode, or 2 when that is 0. Outcome is
// never nil.
func Publish(a *githubactions.Action, env *Env, ev Event, in Inputs, p Publication) (*Outcome, error) {
	out := &Outcome{ExitCode: ExitCode(p.Verdict, in.FailOn), Regressions: Regressions(p.Verdict)}
	if p.Accepted != nil && verdict.Acceptable(p.Verdict, out.ExitCode) {
		out.ExitCode = 0
	}
	var errs []error

	if p.ResultsDir != "" {
		if err := writeManifest(p, ev, env, out); err != nil {
			errs = append(errs, err)
		}
	}
	if err := writeSummary(a, p.Markdown, out); err != nil {
		errs = append(errs, err)
	}
	if err := setOutputs(a, out, [][2]string{
		{OutVerdict, string(p.Verdict.Value)},
		{OutRegressions, regressionsJSON(out.Regressions)},
		{OutReport, p.ReportPath},
		{OutResultsDir, p.ResultsDir},
		{OutBaseline, p.Baseline},
	}); err != nil {
		errs = append(errs, err)
	}
	annotate(a, p, in.FailOn)
	return out, errors.Join(errs...)
}

// PublishComment is the comment step, the only one with the token, run after the gate step's
// containers are gone: it comments dir's results when they are this run's, PR's and head's.
// It never fails the step: what it cannot do is in Outcome.
func PublishComment(ctx context.Context, a *githubactions.Action, env *Env, ev Event, in Inputs, dir string, hc *http.Client) *Outcome {
	out := &Outcome{}
	MaskSecrets(a, in.Token)
	switch {
	case !in.Comment:
		a.Infof("loadgate: comment is false: no pull request comment")
		return out
	case ev.PR == 0:
		a.Infof("loadgate: %s is not a pull request event: no comment", orNone(ev.Name))
		return out
	case dir == "":
		out.notice(a, "loadgate: the gate step wrote no results (it stopped before a verdict): no comment on #%d", ev.PR)
		return out
	}
	m, md, err := ReadManifest(dir)
	if err != nil {
		out.warning(a, "loadgate: no comment on #%d: %v", ev.PR, err)
		return out
	}
	runID := int64(0)
	if env != nil {
		runID = env.RunID
	}
	if m.RunID != runID || m.PR != ev.PR || !strings.EqualFold(m.HeadSHA, ev.HeadSHA) {
		out.warning(a, "loadgate: the results in %s are of run %d, #%d, commit %s, not this run's (%d, #%d, %s): no comment",
			dir, m.RunID, m.PR, result.ShortHash(m.HeadSHA), runID, ev.PR, result.ShortHash(ev.HeadSHA))
		return out
	}
	out.Regressions = m.Regressions
	runURL := env.RunURL()
	footer := commentFooter(ev.HeadSHA, runURL, ArtifactURL(in.ArtifactURL, runURL), "")
	word := VerdictWord(m.Verdict)
	if m.AcceptedBy != "" {
		word += ", ACCEPTED"
	}
	comment(ctx, a, env, in.Token, ev.PR, m.Scenario, word, md, footer, hc, ev.Fork, out)
	return out
}

// ArtifactURL is the footer's link to the results artifact: given, else RUN_URL#artifacts, else "".
func ArtifactURL(given, runURL string) string {
	if u := linkURL(given); u != "" {
		return u
	}
	if runURL == "" {
		return ""
	}
	return runURL + "#artifacts"
}

// comment creates or edits the scenario's comment, recording the outcome in out.
func comment(ctx context.Context, a *githubactions.Action, env *Env, token string, pr int, scenario, word, markdown, footer string, hc *http.Client, fork bool, out *Outcome) {
	if !validName(scenario) {
		// A marker only from the scenario's name: any other is another comment.
		out.warning(a, "loadgate: no comment on #%d: the scenario name %q is not a valid scenario name", pr, clipName(scenario))
		return
	}
	if token == "" {
		out.notice(a, "loadgate: no github-token: no comment on #%d; the report is in the job summary", pr)
		return
	}
	if env == nil || env.Owner == "" {
		out.notice(a, "loadgate: GITHUB_REPOSITORY is not set: no comment on #%d", pr)
		return
	}
	c, err := NewClient(env, token, hc)
	if err != nil {
		out.warning(a, "loadgate: no comment on #%d: %v", pr, err)
		return
	}
	body, cut := CommentBody(scenario, titledWord(markdown, scenario, word), footer)
	out.CommentCut = cut
	me, err := WhoAmI(ctx, c, env.GraphQL())
	var up Upserted
	if err == nil {
		up, err = UpsertComment(ctx, c, env.Owner, env.Repo, pr, scenario, body, me)
	}
	if err != nil {
		switch st := StatusOf(err); st {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			why := "the token may not comment (it needs pull-requests: write)"
			if fork {
				why = "a pull request from a fork gets a read-only token; the workflow_run workflow (loadgate comment --from DIR) comments from the results artifact"
			}
			out.notice(a, "loadgate: no comment on #%d (HTTP %d): %s. The verdict still decides this step.", pr, st, why)
		default:
			out.warning(a, "loadgate: no comment on #%d: %v", pr, err)
		}
		return
	}
	out.CommentID, out.CommentCreated, out.CommentAction = up.ID, up.Action == Created, up.Action
	out.CommentAuthor, out.CommentRemoved = up.Author, up.Removed
	a.Infof("loadgate: %s comment %d on #%d (as %s)", up.Action, up.ID, pr, up.Author)
	if len(up.Removed) > 0 {
		a.Infof("loadgate: removed %d duplicate comment(s) of ours on #%d: %v", len(up.Removed), pr, up.Removed)
	}
}

func commentFooter(head, runURL, artifactURL, extra string) string {
	return linksLine("loadgate", head, runURL, artifactURL, extra)
}

// linksLine is lead, the head commit, the run's and artifact's links and extra on one small line.
func linksLine(lead, head, runURL, artifactURL, extra string) string {
	parts := []string{lead}
	if shaRE.MatchString(head) {
		parts = append(parts, "head `"+result.ShortHash(head)+"`")
	}
	if u := linkURL(runURL); u != "" {
		parts = append(parts, "[workflow run]("+u+")")
	}
	if u := linkURL(artifactURL); u != "" {
		parts = append(parts, "[results artifact]("+u+")")
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return "<sub>" + strings.Join(parts, " · ") + "</sub>"
}

// clipName shortens a hostile string for a message.
func clipName(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// writeSummary appends md to the step summary, cut to keep it within SummaryLimit.
func writeSummary(a *githubactions.Action, md string, out *Outcome) error {
	path := a.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		out.notice(a, "loadgate: GITHUB_STEP_SUMMARY is not set: no step summary")
		return nil
	}
	used := int64(0)
	if fi, err := os.Stat(path); err == nil {
		used = fi.Size()
	}
	room := SummaryLimit - int(used) - len(githubactions.EOF)
	note := fmt.Sprintf("> ✂️ **Cut:** GitHub shows at most 1 MiB of a step summary; part of this report (%s bytes in all) is left out here. The full report is in the results artifact.",
		report.Count(int64(len(md))))
	if room < len(note)+16 {
		out.notice(a, "loadgate: the step summary is already at GitHub's 1 MiB limit: the report is not added")
		return nil
	}
	md = strings.TrimRight(md, "\n")
	md, ok := Cut(md, note, room)
	out.SummaryCut = !ok
	return protect("writing the step summary", func() { a.AddStepSummary(md) })
}

// fileDelimiter is go-githubactions' fixed GITHUB_OUTPUT delimiter: a value holding it would end early.
const fileDelimiter = "_GitHubActionsFileCommandDelimeter_"

func setOutputs(a *githubactions.Action, out *Outcome, kv [][2]string) error {
	if a.Getenv("GITHUB_OUTPUT") == "" {
		out.notice(a, "loadgate: GITHUB_OUTPUT is not set: no step outputs")
		return nil
	}
	var errs []error
	for _, p := range kv {
		if strings.Contains(p[1], fileDelimiter) {
			errs = append(errs, fmt.Errorf("output %s: the value contains the file command delimiter", p[0]))
			continue
		}
		k, v := p[0], p[1]
		if err := protect("setting output "+k, func() { a.SetOutput(k, v) }); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// protect runs f, turning a go-githubactions panic into an error.
func protect(what string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", what, r)
		}
	}()
	f()
	return nil
}

const maxAnnotations = 10 // GitHub shows 10 error and 10 warning annotations per step

func annotate(a *githubactions.Action, p Publication, failOn FailOn) {
	fields := func(title string) map[string]string {
		m := map[string]string{"title": title}
		if p.ScenarioFile != "" {
			m["file"] = filepath.ToSlash(p.ScenarioFile)
		}
		return m
	}
	if p.Verdict.Value == verdict.Unusable {
		why := strings.Join(report.NoteTexts(p.Verdict.Notes), "; ")
		if why == "" {
			why = "the result is marked unusable"
		}
		a.WithFieldsMap(fields("loadgate "+p.Scenario+": unusable run")).Errorf("%s", "No number of this run can be trusted for a verdict: "+why)
		return
	}
	anns := annotations(p.Verdict)
	var errs, warns []annotation
	for _, an := range anns {
		if failsGate(an.value, failOn) && p.Accepted == nil {
			errs = append(errs, an)
		} else {
			warns = append(warns, an)
		}
	}
	emit := func(list []annotation, issue func(*githubactions.Action, string)) {
		for i, an := range list {
			if i == maxAnnotations-1 && len(list) > maxAnnotations {
				var names []string
				for _, rest := range list[i:] {
					names = append(names, rest.workload)
				}
				issue(a.WithFieldsMap(fields(fmt.Sprintf("loadgate %s: %d more workloads", p.Scenario, len(names)))),
					"Also worse or not measured: "+strings.Join(names, ", ")+". See the job summary.")
				return
			}
			title := fmt.Sprintf("loadgate %s: %s %s", p.Scenario, an.workload, an.value)
			issue(a.WithFieldsMap(fields(title)), an.workload+": "+strings.Join(an.lines, "\n"))
		}
	}
	emit(errs, func(x *githubactions.Action, s string) { x.Errorf("%s", s) })
	emit(warns, func(x *githubactions.Action, s string) { x.Warningf("%s", s) })
}

// ManifestFile is the file Publish writes into the results directory for the comment steps.
const ManifestFile = "loadgate-github.json"

// ManifestSchema versions ManifestFile.
const ManifestSchema = "loadgate/github/v1"

// fallbackReport is the Markdown's copy when the report is outside the results directory.
const fallbackReport = "loadgate-comment.md"

// Manifest is what the comment steps need from a results directory; untrusted in an artifact.
type Manifest struct {
	Schema      string        `json:"schema"`
	Scenario    string        `json:"scenario"`
	PR          int           `json:"pr"`
	HeadSHA     string        `json:"head_sha"`
	Verdict     verdict.Value `json:"verdict"`
	ExitCode    int           `json:"exit_code"`
	Regressions []string      `json:"regressions"`
	Report      string        `json:"report"` // the Markdown report, relative to the results directory
	RunID       int64         `json:"run_id"`
	AcceptedBy  string        `json:"accepted_by,omitempty"` // who accepted the failing verdict (exit_code then 0)
}

func writeManifest(p Publication, ev Event, env *Env, out *Outcome) error {
	// Through an os.Root: head may have committed a symlink where these files go.
	if err := outfile.Results(p.ResultsDir); err != nil {
		return fmt.Errorf("results-dir: %w", err)
	}
	rel := ""
	src := p.ReportPath
	if p.CommentPath != "" {
		src = p.CommentPath
	}
	if src != "" {
		if r, err := filepath.Rel(p.ResultsDir, src); err == nil && filepath.IsLocal(r) {
			rel = filepath.ToSlash(r)
		}
	}
	if rel == "" {
		rel = fallbackReport
		if err := outfile.WriteFile(filepath.Join(p.ResultsDir, rel), []byte(p.Markdown)); err != nil {
			return fmt.Errorf("results-dir: %w", err)
		}
	}
	m := Manifest{
		Schema: ManifestSchema, Scenario: p.Scenario, PR: ev.PR, HeadSHA: ev.HeadSHA,
		Verdict: p.Verdict.Value, ExitCode: out.ExitCode, Regressions: out.Regressions, Report: rel,
	}
	if p.Accepted != nil && out.ExitCode == 0 {
		m.AcceptedBy = p.Accepted.By
	}
	if env != nil {
		m.RunID = env.RunID
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(filepath.Join(p.ResultsDir, ManifestFile), append(b, '\n')); err != nil {
		return fmt.Errorf("results-dir: %w", err)
	}
	return nil
}

// ReadManifest reads and checks dir's ManifestFile and the report it names.
func ReadManifest(dir string) (Manifest, string, error) {
	var m Manifest
	b, err := ReadArtifactFile(dir, ManifestFile, 1<<20)
	if err != nil {
		return m, "", err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, "", fmt.Errorf("%s: %w", ManifestFile, err)
	}
	switch {
	case m.Schema != ManifestSchema:
		return m, "", fmt.Errorf("%s: schema %q, want %q", ManifestFile, m.Schema, ManifestSchema)
	case !validName(m.Scenario):
		return m, "", fmt.Errorf("%s: scenario name %q is not a valid scenario name", ManifestFile, clipName(m.Scenario))
	case !knownVerdict(m.Verdict):
		return m, "", fmt.Errorf("%s: verdict %q is not a verdict", ManifestFile, clipName(string(m.Verdict)))
	case m.HeadSHA != "" && !shaRE.MatchString(m.HeadSHA):
		return m, "", fmt.Errorf("%s: head_sha %q is not a commit", ManifestFile, clipName(m.HeadSHA))
	case m.PR < 0:
		return m, "", fmt.Errorf("%s: bad pull request number %d", ManifestFile, m.PR)
	case m.AcceptedBy != "" && !loginRE.MatchString(m.AcceptedBy):
		return m, "", fmt.Errorf("%s: accepted_by %q is not a login", ManifestFile, clipName(m.AcceptedBy))
	case !filepath.IsLocal(filepath.FromSlash(m.Report)):
		return m, "", fmt.Errorf("%s: report %q is not inside the results directory", ManifestFile, m.Report)
	}
	md, err := ReadArtifactFile(dir, m.Report, 16<<20)
	if err != nil {
		return m, "", err
	}
	return m, string(md), nil
}

// ReadArtifactFile reads the regular file name under dir, at most limit bytes; nothing outside
// dir, and no symbolic link on the way, as an artifact has no reason to hold one.
func ReadArtifactFile(dir, name string, limit int64) ([]byte, error) {
	rel := filepath.FromSlash(name)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s: not inside the results directory", name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, err := root.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %s is a symbolic link, refused in an artifact", name, filepath.ToSlash(p))
		}
		if i == len(parts)-1 && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", name)
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return b, nil
}

// VerdictFile is the gate's verdict, from which the fork comment is rendered.
const VerdictFile = "verdict.json"

// PublishFromDir comments from a gate run's downloaded, untrusted results (ForkComment) in a
// workflow_run workflow. Unless the pull request still has the run's head and the artifact
// agrees with itself and the run, it only notices. A malformed artifact is an error.
// pr 0 is the event's, else the manifest's. The comment is rebuilt from verdict.json, never
// from the artifact's Markdown; ExitCode is 0.
func PublishFromDir(ctx context.Context, a *githubactions.Action, env *Env, ev Event, dir string, pr int, token, artifactURL string, hc *http.Client) (*Outcome, error) {
	out := &Outcome{}
	MaskSecrets(a, token)
	m, vf, err := readForkArtifact(dir)
	if err != nil {
		return out, err
	}
	out.Regressions = m.Regressions
	if pr == 0 {
		pr = ev.PR
	}
	if pr == 0 {
		pr = m.PR
	}
	if pr <= 0 {
		out.notice(a, "loadgate: no pull request number (not in the event nor in %s): no comment", ManifestFile)
		return out, nil
	}
	want := ev.HeadSHA
	if ev.Name != "workflow_run" || want == "" {
		want = m.HeadSHA
	}
	if want == "" {
		return out, fmt.Errorf("no head commit to check #%d against (neither the event nor %s has one)", pr, ManifestFile)
	}
	if why := forkMismatch(ev, m, vf, want); why != "" {
		out.notice(a, "loadgate: %s: no comment on #%d", why, pr)
		return out, nil
	}
	if token == "" {
		out.notice(a, "loadgate: no github-token: no comment on #%d", pr)
		return out, nil
	}
	if env == nil || env.Owner == "" {
		out.notice(a, "loadgate: GITHUB_REPOSITORY is not set: no comment on #%d", pr)
		return out, nil
	}
	c, err := NewClient(env, token, hc)
	if err != nil {
		return out, err
	}
	if !pullHeadIs(ctx, a, c, env, ev, pr, want, out) {
		return out, nil
	}
	runURL := ""
	if ev.RunID != 0 && env.Repository != "" {
		runURL = fmt.Sprintf("%s/%s/actions/runs/%d", env.ServerURL, env.Repository, ev.RunID)
	}
	word := VerdictWord(vf.Value)
	if vf.Accepted = confirmAccept(ctx, a, c, env, ev, pr, want, vf, m); vf.Accepted != nil {
		word += ", ACCEPTED"
	}
	md := ForkComment(vf, want, runURL, ArtifactURL(artifactURL, runURL))
	comment(ctx, a, env, token, pr, m.Scenario, word, md, "", hc, false, out)
	return out, nil
}

// confirmAccept is the artifact's claimed acceptance checked again through the API
// (CheckAccept, of the triggering run, which must have succeeded); nil when there is
// none or it does not hold. The artifact's own claim is never shown.
func confirmAccept(ctx context.Context, a *githubactions.Action, c *github.Client, env *Env, ev Event, pr int, head string, vf *report.GateVerdictFile, m Manifest) *verdict.Acceptance {
	if vf.Accepted == nil && m.AcceptedBy == "" {
		return nil
	}
	claim := m.AcceptedBy
	if vf.Accepted != nil {
		claim = vf.Accepted.By
	}
	if ev.Name != "workflow_run" || ev.RunConclusion != "success" {
		a.Noticef("loadgate: the artifact says accepted by %q, but its run concluded %q: not shown", clipName(claim), ev.RunConclusion)
		return nil
	}
	acc, why, err := CheckAccept(ctx, c, AcceptQuery{Owner: env.Owner, Repo: env.Repo, PR: pr, HeadSHA: head, RunID: ev.RunID, Attempt: ev.RunAttempt})
	switch {
	case err != nil:
		why = err.Error()
	case acc == nil && why == "":
		why = "no " + verdict.AcceptLabel + " label"
	}
	if acc == nil {
		a.Noticef("loadgate: the artifact says accepted by %q, which the API does not confirm (%s): not shown", clipName(claim), why)
		return nil
	}
	acc.VerdictExitCode = vf.ExitCode
	return acc
}

// readForkArtifact reads and checks the artifact's manifest and verdict.json.
func readForkArtifact(dir string) (Manifest, *report.GateVerdictFile, error) {
	m, _, err := ReadManifest(dir)
	if err != nil {
		return m, nil, err
	}
	vb, err := ReadArtifactFile(dir, VerdictFile, 16<<20)
	if err != nil {
		return m, nil, err
	}
	vf, err := report.DecodeGateVerdict(bytes.NewReader(vb))
	if err != nil {
		return m, nil, fmt.Errorf("%s: %w", VerdictFile, err)
	}
	return m, vf, nil
}

// forkMismatch says why the artifact contradicts want, itself or the run; "" when it does not.
func forkMismatch(ev Event, m Manifest, vf *report.GateVerdictFile, want string) string {
	run := ev.Name == "workflow_run"
	switch {
	case m.HeadSHA != "" && !strings.EqualFold(m.HeadSHA, want):
		return fmt.Sprintf("the artifact is of commit %s, the run of %s", result.ShortHash(m.HeadSHA), result.ShortHash(want))
	case vf.Value != m.Verdict || vf.Scenario.Name != m.Scenario:
		return fmt.Sprintf("the artifact's %s says %s of %q, its %s %s of %q",
			VerdictFile, vf.Value, clipName(vf.Scenario.Name), ManifestFile, m.Verdict, m.Scenario)
	case run && ev.RunConclusion != "" && ev.RunConclusion != "success" && (vf.ExitCode == 0 || m.ExitCode == 0):
		return fmt.Sprintf("the artifact claims %s but its run concluded %s", vf.Value, ev.RunConclusion)
	case run && ev.HeadRepo == "":
		return "the run names no head repository (deleted?)"
	}
	return ""
}

// pullHeadIs reports whether pr's head is still the run's repository, branch and want.
func pullHeadIs(ctx context.Context, a *githubactions.Action, c *github.Client, env *Env, ev Event, pr int, want string, out *Outcome) bool {
	got, _, err := c.PullRequests.Get(ctx, env.Owner, env.Repo, pr)
	if err != nil {
		out.warning(a, "loadgate: reading #%d: %v", pr, err)
		return false
	}
	if h := got.GetHead(); ev.HeadRepo != "" && (!strings.EqualFold(h.GetRepo().GetFullName(), ev.HeadRepo) || h.GetRef() != ev.HeadRef) {
		out.notice(a, "loadgate: #%d's head is %s:%s, the run's %s:%s: no comment", pr, h.GetRepo().GetFullName(), h.GetRef(), ev.HeadRepo, ev.HeadRef)
		return false
	}
	if !strings.EqualFold(got.GetHead().GetSHA(), want) {
		out.notice(a, "loadgate: #%d's head is %s, the results are of %s: no comment (a newer run will comment)", pr, result.ShortHash(got.GetHead().GetSHA()), result.ShortHash(want))
		return false
	}
	return true
}

// Comment is `loadgate comment`: PublishFromDir with getenv's GITHUB_* and token, commands on w.
func Comment(ctx context.Context, w io.Writer, getenv func(string) string, dir string, pr int, artifactURL string) (*Outcome, error) {
	env, ev, err := envAndEvent(getenv)
	if err != nil {
		return nil, err
	}
	return PublishFromDir(ctx, githubactions.New(githubactions.WithWriter(w)), env, ev, dir, pr, getenv("GITHUB_TOKEN"), artifactURL, nil)
}

// CommentStep is `loadgate comment --github`: PublishComment with the step's inputs and
// environment (dir "": no results). The error is for bad inputs or environment.
func CommentStep(ctx context.Context, w io.Writer, getenv func(string) string, dir string) (*Outcome, error) {
	a := githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(getenv))
	in, err := ReadCommentInputs(a)
	if err != nil {
		return nil, err
	}
	env, ev, err := envAndEvent(getenv)
	if err != nil {
		return nil, err
	}
	ws := env.Workspace
	if ws == "" {
		ws = "."
	}
	onDemandHead(ctx, ws, &ev)
	out := PublishComment(ctx, a, env, ev, in, dir, nil)
	if dir != "" {
		if m, _, err := ReadManifest(dir); err == nil && m.RunID == env.RunID && m.PR == ev.PR && strings.EqualFold(m.HeadSHA, ev.HeadSHA) {
			postStatus(ctx, a, env, in.Token, ev, m, nil, out)
		}
	}
	return out, nil
}

func envAndEvent(getenv func(string) string) (*Env, Event, error) {
	env, err := FromEnv(getenv)
	if err != nil {
		return nil, Event{}, err
	}
	ev, err := ReadEvent(env)
	return env, ev, err
}
