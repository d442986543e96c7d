// Package readme tests the repository's documents: every Go code block of docs/tour.md and
// docs/errors.md is a testable example here (a test checks that each block appears verbatim,
// so the code compiles, runs, and prints what the document says it prints); the README's
// install commands and complete example run in a fresh module; links, example commands and
// their flags point at things that exist.
package readme
