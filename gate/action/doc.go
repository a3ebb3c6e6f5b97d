// Package action is loadgate's GitHub Actions surface: inputs (INPUT_*),
// outputs, the step summary, annotations, masked secrets and one sticky pull
// request comment per scenario. It publishes a verdict, never judges one, and
// nothing that fails while publishing changes the exit code.
//
// The gate step (Step) runs the pull request's code and has no token; the
// comment step after it (CommentStep) is the only one that has. A comment is
// found by its first line, Marker(scenario), and its author, the token's own
// account (WhoAmI): nobody else's is edited or deleted. Fork pull requests
// are commented from a workflow_run workflow (PublishFromDir).
package action
