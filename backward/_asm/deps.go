//go:build tools

package main

// The generator reads the Go declarations of the routines from this package (Package in
// main), so the module requires the main module (replaced by ../.. in go.mod); the import
// here keeps that requirement through go mod tidy. The tag keeps it out of the build.
import _ "github.com/gatejet/gatejet/backward"
