// Package github is loadgate's GitHub Actions surface: the action's inputs
// (INPUT_* variables), its outputs (GITHUB_OUTPUT), the job step summary
// (GITHUB_STEP_SUMMARY), error annotations per regressed workload, masked
// secrets, and one sticky pull request comment per scenario.
//
// It sits at the end of the pipeline: it takes a verdict and its rendered
// Markdown report and publishes them; it never measures nor judges. The exit
// code stays the verdict's (ExitCode with the fail-on input): nothing that
// happens while commenting changes it.
//
// # How the binary gets its inputs
//
// action.yml (repository root) is a composite action. Composite actions get
// no INPUT_* variables by themselves, so its run step passes each input
// through env as INPUT_<NAME>, NAME upper-cased with spaces turned into
// underscores and hyphens KEPT (INPUT_STACK-CPUS, INPUT_GITHUB-TOKEN): that
// is what the runner does for JavaScript and Docker actions and what
// go-githubactions' GetInput looks up. Such names are valid in a process
// environment (bash cannot expand them, Go reads them). InputNames lists the
// inputs the code reads; a test checks action.yml against it, and against
// OutputNames.
//
// # File commands
//
// go-githubactions' file commands (SetOutput, AddStepSummary) panic when the
// file cannot be opened, which is the case when GITHUB_OUTPUT or
// GITHUB_STEP_SUMMARY is unset (outside Actions). This package checks the
// variable first (skipping with a notice) and turns any remaining panic into
// an error. The summary is written with AddStepSummary, never with
// AddStepSummaryTemplate (html/template would escape the Markdown).
//
// # The pull request comment
//
// One comment per scenario, found among all the pull request's comments
// (every page) by its marker line, Marker(scenario), which is the comment's
// first line; when the token's identity is known (GET /user works for
// personal access tokens), the author must be that identity too; when it is
// not (GITHUB_TOKEN and other installation tokens get 403 from /user), the
// author must be a bot, as every comment made with such a token is. A
// comment that merely quotes the marker, or a person's comment, is never
// edited. The body stays within GitHub's 65 536-character limit, counted in
// bytes (never more characters than bytes in any unit GitHub may count): the
// details are cut and a note says so; the verdict section (last in every
// report) is kept.
//
// Without a token, without a pull request, or with a token that may not
// comment (a fork's read-only GITHUB_TOKEN gets 403), there is no failure:
// a notice, the summary and outputs still written. Fork pull requests get
// their comment from a second workflow triggered by workflow_run, which
// downloads the results artifact and calls PublishFromDir (the command
// `loadgate comment --from DIR --pr N`); the artifact is untrusted, so the
// pull request's head commit is checked against the triggering run's.
package github
