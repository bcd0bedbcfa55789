// Package docs keeps the reader guides true: its tests read README.md,
// CONTRIBUTING.md and docs/*.md and fail, naming the document and the path,
// when a file or folder they point at does not exist, when
// docs/architecture.md leaves out a port or an adapter package, or when a
// package of the module has no doc.go.
//
// They also catch figures and lists that drift from their source: a worker
// count, in digits or in words, that is not its flag's default; build-time
// figures that disagree; versions in the README that are not go.mod's,
// test/tools/go.mod's or those the APIs of config/ need; the webhook
// budget; the CRD versions and rollout settings docs/upgrading.md gives;
// a link to a heading that the page lacks; and the alerts: every rule of
// config/prometheus/alerts.yaml has a runbook_url whose anchor is a
// heading of docs/troubleshooting.md, docs/deploying.md lists exactly
// those rules, promtool checks them and runs the cases of
// config/prometheus/alerts_test.yaml, which make each alert fire and leave
// it silent, and every metric the rules and config/grafana's dashboard
// query is one docs/reference.md lists. The tests that render config/ with
// kubectl (the kit under another name prefix, the order config/default
// applies in, the troubleshooting guide's scoping overlay) and those that
// run promtool need `make tools`, as the rest of the test tiers do.
//
// Every ```go block of README.md and docs/*.md is type-checked against the
// module's current API (codeblocks_test.go says how fragments are wrapped
// and how a block that is not Go is marked), so a recipe that names a
// function the module no longer has fails here rather than in a reader's
// editor.
//
// The checks are plain functions fed with text and a file tree, and each
// has table cases that must fail, so a check that stopped catching
// anything would be noticed.
package docs
