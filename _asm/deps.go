//go:build tools

package main

// The generator reads the Go declarations of the routines from these packages (Package in
// main), so the module requires the main module (replaced by .. in go.mod); the imports
// here keep that requirement through go mod tidy. The tag keeps them out of the build.
import (
	_ "github.com/gatejet/gatejet/backward"
	_ "github.com/gatejet/gatejet/softmaxjet"
)
