// Package ui serves agent-rewind's local web page for one workspace: the timeline of
// checkpoints (branches, position, kinds, sizes of change, automatic checkpoints grouped by
// agent session), the diff between any two points or a point and the live workspace (a tree,
// and line diffs unified or side by side), restore of chosen paths and rewind (dry run first,
// then a confirmation; both recorded on the chain), the effect ledger with release, the chain's
// verification, and the gateway's replay-savings receipt.
//
// It is served by net/http from embedded assets (assets/: one HTML template, a script without a
// framework, a style sheet); nothing is fetched from the network. Security (security.go): the
// listener is on 127.0.0.1 only; every path starts with a random token, so a page another site
// opens cannot name it; the Host header must be the address served (no DNS rebinding); a
// request that changes anything is a POST carrying the page's CSRF token in a header, from the
// same origin; paths in requests are checked by the snapshot store exactly as a rewind's.
package ui
