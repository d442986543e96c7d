module github.com/gatejet/gatejet/_asm

go 1.24

require (
	github.com/gatejet/gatejet v0.0.0
	github.com/mmcloughlin/avo v0.6.0
)

require (
	golang.org/x/mod v0.22.0 // indirect
	golang.org/x/sync v0.10.0 // indirect
	golang.org/x/sys v0.28.0 // indirect
	golang.org/x/tools v0.28.0 // indirect
)

replace github.com/gatejet/gatejet v0.0.0 => ..
