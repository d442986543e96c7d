// Package readme holds, as testable examples, every Go code block of the repository's
// README.md; its test checks that each block appears verbatim in an example here, so the
// README's code compiles, runs, and prints what the README says it prints.
package readme
