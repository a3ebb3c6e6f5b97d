// Package action is loadgate's GitHub Actions surface: inputs (INPUT_*),
// outputs (GITHUB_OUTPUT), the step summary, error annotations, masked
// secrets and one sticky pull request comment per scenario. It publishes a
// verdict; it never measures nor judges, and nothing that happens while
// publishing changes the exit code (ExitCode with fail-on).
//
// action.yml is a composite action: its run steps pass each input as
// INPUT_<NAME>, upper-cased with hyphens kept, as go-githubactions' GetInput
// reads it. A test checks action.yml against InputNames and OutputNames.
// The gate step (Step, Publish) runs the pull request's code and has no
// token; the comment step after it (CommentStep) is the only one that has.
//
// The comment is found by its first line, Marker(scenario), and by its
// author, the token's own account (WhoAmI); a comment by anyone else is
// never edited nor deleted. Its body stays within GitHub's 65 536-byte limit
// (the details are cut; the verdict section is kept). Without a token, a pull
// request or comment permission, publishing degrades to a notice. Fork pull
// requests are commented from a workflow_run workflow through PublishFromDir,
// which checks the untrusted artifact's head commit against the run's.
package action
