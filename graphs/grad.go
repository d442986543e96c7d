package graphs

import (
	"sync"

	"gorgonia.org/gorgonia"
)

// gradMu serialises every call of gorgonia.Grad made by gatejet.
var gradMu sync.Mutex

// Grad calls gorgonia.Grad(cost, wrt...) while holding a package-level lock.
//
// gorgonia.Grad in Gorgonia v0.9.18 is not safe for concurrent use, even on graphs that
// share nothing: concurrent calls race on (*Node).Hashcode. GradCheck and RequireGradients
// call it only through Grad, so they may run on separate graphs from several goroutines.
// Code that calls gorgonia.Grad itself while other goroutines may be differentiating
// (including through GradCheck) must serialise those calls too, most simply by calling
// Grad instead. The lock does not make concurrent use of one graph safe.
func Grad(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	gradMu.Lock()
	defer gradMu.Unlock()
	return gorgonia.Grad(cost, wrt...)
}
