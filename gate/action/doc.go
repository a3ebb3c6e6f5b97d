// Package action is loadgate's GitHub Actions surface: the action's inputs
// (INPUT_* variables), its outputs (GITHUB_OUTPUT), the job step summary
// (GITHUB_STEP_SUMMARY), error annotations per regressed workload, masked
// secrets, and one sticky pull request comment per scenario.
//
// It sits at the end of the pipeline: it takes a verdict and its rendered
// Markdown report and publishes them; it never measures nor judges. The exit
// code stays the verdict's (ExitCode with the fail-on input): nothing that
// happens while commenting changes it. Step is the whole step of
// `loadgate gate --github`: it runs the gate through the Gate interface
// (the command wires gate/rounds to it), so the step's flow — inputs,
// an unusable gate still published, fail-on — is tested with a fake.
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
// first line, and by its author: the token's own account (WhoAmI), never
// read from a comment. The account is GET /user's login (personal tokens);
// when /user is refused (403: GITHUB_TOKEN and every app installation
// token), GraphQL's viewer login ("github-actions[bot]", "<app>[bot]"; a
// [bot] login must be a Bot's comment); when that is refused too,
// github-actions[bot] is assumed, and the author of the comment created
// corrects it (that account's older copies are deleted). A comment with
// the marker by anyone else, or one that merely quotes it, is never edited
// nor deleted. The scenario name is the same for every outcome (the
// command derives it once, from the scenario, never from a file name):
// one marker, one comment. The body is compared before a PATCH: "edited"
// only when it changed, else "unchanged". The title line carries the
// verdict word (Titled), the footer links the workflow run and the results
// artifact. The body stays within GitHub's 65 536-character limit, counted
// in bytes (never more characters than bytes in any unit GitHub may
// count): the details are cut and a note says so; the verdict section
// (last in every report) is kept. Strings from results and scenarios are
// escaped for Markdown with EscapeMarkdown and EscapeCode.
//
// Without a token, without a pull request, or with a token that may not
// comment (a fork's read-only GITHUB_TOKEN gets 403), there is no failure:
// a notice, the summary and outputs still written. Fork pull requests get
// their comment from a second workflow triggered by workflow_run, which
// downloads the results artifact and calls PublishFromDir (the command
// `loadgate comment --from DIR --pr N`); the artifact is untrusted, so the
// pull request's head commit is checked against the triggering run's.
package action
