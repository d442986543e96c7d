package kernel

import (
	"fmt"
	"sync"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Channel is one output of the row jet.
type Channel uint8

// The channels, in the order of a gate's kernels.
const (
	Value       Channel = iota // ẑ [N,P]
	First                      // ∂ẑ/∂l [N,K,P]
	Second                     // ∂²ẑ/∂l∂l [N,K,K,P]
	HVP                        // Σ_b second[a][b]·v_b [N,K,P]
	GaussNewton                // Σ_c first[a][c]·first[b][c] [N,K,K]
	NumChannels
)

// channels declares, once for every gate, what each channel's forward and VJP kernels take.
// The VJP of a channel takes the forward's inputs and the upstream gradient G (the shape of
// the channel), and writes the gradient of every differentiable input (logits, decoded and,
// for HVP, v); the CPU may skip any of them.
var channels = [NumChannels]struct {
	name   string // Go name (ops constructors, errors)
	suffix string // kernel name suffix
	out    Dim
}{
	Value:       {"Value", "value", NP},
	First:       {"First", "first", NKP},
	Second:      {"Second", "second", NKKP},
	HVP:         {"HVP", "hvp", NKP},
	GaussNewton: {"GaussNewton", "gauss_newton", NKK},
}

func (c Channel) String() string {
	if c < NumChannels {
		return channels[c].name
	}
	return fmt.Sprintf("Channel(%d)", c)
}

// HasV reports whether the channel takes a direction v [N,K] as its third input.
func (c Channel) HasV() bool { return c == HVP }

// Out is the length of the channel's output.
func (c Channel) Out() Dim { return channels[c].out }

// in returns the forward kernel's inputs: logits, decoded [, v].
func (c Channel) in() []Dim {
	if c.HasV() {
		return []Dim{NK, NKP, NK}
	}
	return []Dim{NK, NKP}
}

// NumCoord is the number of a gate's coordinate jets: the first, second, HVP and
// Gauss-Newton channels over the 2K primaries (logits and latent coordinates).
const NumCoord = int(NumChannels) - 1

// coordChannels declares what each coordinate jet takes and writes: logits [N,K], the decoded
// rows d0 and their derivatives d1 (and, for second and HVP, d2) in the coordinates, each
// [N,K,P], and for HVP a direction v [N,2K] over the primaries.
var coordChannels = [NumChannels]struct {
	in  []Dim
	out Dim
}{
	First:       {[]Dim{NK, NKP, NKP}, N2KP},
	Second:      {[]Dim{NK, NKP, NKP, NKP}, N2K2KP},
	HVP:         {[]Dim{NK, NKP, NKP, NKP, N2K}, N2KP},
	GaussNewton: {[]Dim{NK, NKP, NKP}, N2K2K},
}

// CoordIn is the number of inputs of channel c's coordinate jet: logits, d0, d1 [, d2] [, v]
// (0 for the value channel, which has none).
func (c Channel) CoordIn() int {
	if c == Value || c >= NumChannels {
		return 0
	}
	return len(coordChannels[c].in)
}

// CoordOut is the length of channel c's coordinate jet output.
func (c Channel) CoordOut() Dim { return coordChannels[c].out }

// Gate declares a row-jet gating function: the parameters its kernels take and how to make the
// softmaxjet.Gate that computes them on the CPU. Registering a Gate (Register) adds its ten
// kernels to the table, named <Name>_<channel> and <Name>_<channel>_vjp, then its four
// coordinate jets, named <Name>_coord_<channel>.
type Gate struct {
	// Name is the stem of the gate's kernel names ("jet" for softmax, "logistic").
	Name string
	// Title is the stem of the names of its ops ("SoftmaxJet": ops.SoftmaxJetValue, …).
	Title string
	// Params are the gate's parameters, in the order of a call's floats.
	Params []Param
	// Check validates the floats of a call with K atoms (their count is checked before).
	Check func(op string, K int, floats []float64) error
	// CPU runs the gate's kernels on the CPU: GateCPU of the functions that make its
	// softmaxjet.Gate from a call's floats.
	CPU GateFuncs
	// Device is how the gate's device kernels are built, or nil for a gate on the CPU only.
	Device *GateDevice
	// Sample returns typical floats for K atoms from uniform draws u ∈ [0, 1) and normal
	// draws z: the parameters tests and benchmarks call the gate's kernels with.
	Sample func(K int, u, z func() float64) []float64

	first ID // the ID of <Name>_value; set by Register
}

// Param is one named parameter of a gate: a scalar, or one value per atom.
type Param struct {
	Name    string
	PerAtom bool
}

// GateDevice describes a gate's device kernels.
type GateDevice struct {
	Module string
	Floats FloatsPassing
	// Warp marks the row jets (forward kernels by channel, then VJPs) that also have a
	// warp-per-row variant (Device.Warp); the coordinate jets, in the gate's module too, have
	// none. Each kernel's shared-memory layout is measured from its code (Device.Shared) and
	// its width follows from its outputs (JetWidth): neither is declared.
	Warp [2 * NumChannels]bool
}

// NumFloats is the number of floats a call of the gate's kernels with K atoms takes.
func (g *Gate) NumFloats(K int) int {
	n := 0
	for _, p := range g.Params {
		if p.PerAtom {
			n += K
		} else {
			n++
		}
	}
	return n
}

// Kernel returns the ID of the gate's kernel of channel c, forward or VJP.
func (g *Gate) Kernel(c Channel, vjp bool) ID {
	id := g.first + ID(c)
	if vjp {
		id += ID(NumChannels)
	}
	return id
}

// CoordKernel returns the ID of the gate's coordinate jet of channel c (First, Second, HVP or
// GaussNewton), and 0 for the value channel, which has none.
func (g *Gate) CoordKernel(c Channel) ID {
	if c == Value || c >= NumChannels {
		return 0
	}
	return g.first + ID(2*NumChannels) + ID(c-1)
}

// Register adds the gate's ten row-jet kernels and four coordinate jets to the table, with
// device entry points in the gate's module when it has a Device. It
// panics if the gate is incomplete or registered twice (a programming error, reached at
// package initialisation).
func Register(g *Gate) {
	if g.CPU.f64[0] == nil || g.CPU.coord64[0] == nil || g.Check == nil || g.Sample == nil || g.Name == "" || g.Title == "" {
		panic("kernel: incomplete gate " + g.Name)
	}
	regMu.Lock()
	defer regMu.Unlock()
	if g.first != 0 {
		panic("kernel: gate " + g.Name + " registered twice")
	}
	// Ops are named, and Gorgonia merges equal nodes, by Title and parameter names: two gates
	// sharing them would share nodes.
	for _, o := range Gates() {
		if o.Title == g.Title || o.Name == g.Name {
			panic("kernel: gate " + g.Name + " (" + g.Title + ") has the name or title of gate " + o.Name)
		}
	}
	f64, f32 := g.CPU.f64, g.CPU.f32
	ss := make([]Spec, 0, 2*int(NumChannels)+NumCoord)
	for i := range 2 * int(NumChannels) {
		c, vjp := Channel(i%int(NumChannels)), i >= int(NumChannels)
		s := Spec{Name: g.Name + "_" + channels[c].suffix, Family: RowJet, Gate: g, Channel: c, VJP: vjp,
			In: c.in(), Out: []Dim{c.Out()}, F64: f64[i], F32: f32[i]}
		if vjp {
			s.Name += "_vjp"
			s.In = append(s.In, c.Out())
			s.Out = c.in()
			s.Skippable = 1<<len(s.Out) - 1
		}
		if d := g.Device; d != nil {
			s.Device = &Device{Module: d.Module, Shared: generatedLayout(s.Name), Width: JetWidth(s.Out),
				Floats: d.Floats, Warp: d.Warp[i]}
		}
		ss = append(ss, s)
	}
	for c := First; c < NumChannels; c++ {
		s := Spec{Name: g.Name + "_coord_" + channels[c].suffix, Family: CoordJet, Gate: g, Channel: c,
			In: coordChannels[c].in, Out: []Dim{coordChannels[c].out}, F64: g.CPU.coord64[c-1], F32: g.CPU.coord32[c-1]}
		if d := g.Device; d != nil {
			s.Device = &Device{Module: d.Module, Shared: generatedLayout(s.Name), Width: JetWidth(s.Out), Floats: d.Floats}
		}
		ss = append(ss, s)
	}
	// g.first is set before registerLocked publishes the kernels: a reader that finds g in the
	// table (Gates, Spec().Gate) may at once ask it for its kernels (Kernel), without the lock.
	g.first = ID(len(*specs.Load()))
	registered := false
	defer func() {
		if !registered {
			g.first = 0 // registerLocked refused the kernels
		}
	}()
	registerLocked(ss)
	registered = true
}

// generatedLayout is the measured shared-memory layout of the device kernel called name
// (shared_layouts.go), or nil before `go generate ./cudaops/...` has measured it: the launch
// planner then refuses the kernel, and the generator, which launches it with a configuration
// of its own, can still run.
func generatedLayout(name string) *Shared {
	l, ok := sharedLayouts[name]
	if !ok {
		return nil
	}
	return &l
}

// Gates returns the registered gates in the order of registration: the built-in ones, then
// any registered later (a test's).
func Gates() []*Gate {
	var gs []*Gate
	for _, id := range All() { // a gate's kernels are consecutive
		if g := id.Spec().Gate; g != nil && (len(gs) == 0 || gs[len(gs)-1] != g) {
			gs = append(gs, g)
		}
	}
	return gs
}

// GateFuncs are the CPU functions of a gate's ten row-jet kernels and four coordinate jets.
type GateFuncs struct {
	f64     [2 * NumChannels]CPU[float64]
	f32     [2 * NumChannels]CPU[float32]
	coord64 [NumCoord]CPU[float64]
	coord32 [NumCoord]CPU[float32]
}

// GateCPU returns the CPU functions of a gate whose softmaxjet.Gate, for a call's floats
// and K, mk64 and mk32 make. They return the gate's concrete type, so that a call boxes
// nothing.
func GateCPU[G64 softmaxjet.Gate[float64], G32 softmaxjet.Gate[float32]](
	mk64 func(floats []float64, K int) G64, mk32 func(floats []float64, K int) G32) GateFuncs {
	return GateFuncs{channelCPU(mk64), channelCPU(mk32), coordCPU(mk64), coordCPU(mk32)}
}

// coordCPU returns the CPU functions of a gate's coordinate jets (First, Second, HVP,
// GaussNewton) for the gate made by mk. The coordinate jets take the gate as a
// softmaxjet.Gate[T]: a value converted to it would be stored on the heap each call, so the
// gate is made in a pooled *G, whose pointer the interface holds.
func coordCPU[T gatejet.Float, G softmaxjet.Gate[T]](mk func([]float64, int) G) [NumCoord]CPU[T] {
	sh := func(ints []int) softmaxjet.Shape { return softmaxjet.Shape{N: ints[0], K: ints[1], P: ints[2]} }
	pool := sync.Pool{New: func() any { return new(G) }}
	// with runs f with the call's gate.
	with := func(f []float64, K int, run func(g softmaxjet.Gate[T]) error) error {
		p := pool.Get().(*G)
		*p = mk(f, K)
		err := run(any(p).(softmaxjet.Gate[T]))
		var zero G
		*p = zero // drop the call's parameters
		pool.Put(p)
		return err
	}
	return [NumCoord]CPU[T]{
		func(o *Operands[T], n []int, f []float64) error {
			return with(f, n[1], func(g softmaxjet.Gate[T]) error {
				return softmaxjet.CoordFirst(g, o.Out[0], o.In[0], o.In[1], o.In[2], sh(n))
			})
		},
		func(o *Operands[T], n []int, f []float64) error {
			return with(f, n[1], func(g softmaxjet.Gate[T]) error {
				return softmaxjet.CoordSecond(g, o.Out[0], o.In[0], o.In[1], o.In[2], o.In[3], sh(n))
			})
		},
		func(o *Operands[T], n []int, f []float64) error {
			return with(f, n[1], func(g softmaxjet.Gate[T]) error {
				return softmaxjet.CoordHVP(g, o.Out[0], o.In[0], o.In[1], o.In[2], o.In[3], o.In[4], sh(n))
			})
		},
		func(o *Operands[T], n []int, f []float64) error {
			return with(f, n[1], func(g softmaxjet.Gate[T]) error {
				return softmaxjet.CoordGaussNewton(g, o.Out[0], o.In[0], o.In[1], o.In[2], sh(n))
			})
		},
	}
}

// channelCPU returns the CPU functions of a gate's ten kernels, in ID order, for the gate made
// by mk: the one place that runs a channel of any gate.
func channelCPU[T gatejet.Float, G softmaxjet.Gate[T]](mk func([]float64, int) G) [2 * NumChannels]CPU[T] {
	sh := func(ints []int) softmaxjet.Shape { return softmaxjet.Shape{N: ints[0], K: ints[1], P: ints[2]} }
	return [2 * NumChannels]CPU[T]{
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).Value(o.Out[0], o.In[0], o.In[1], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).First(o.Out[0], o.In[0], o.In[1], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).Second(o.Out[0], o.In[0], o.In[1], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).HVP(o.Out[0], o.In[0], o.In[1], o.In[2], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).GaussNewton(o.Out[0], o.In[0], o.In[1], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).ValueVJP(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).FirstVJP(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).SecondVJP(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).HVPVJP(o.Out[0], o.Out[1], o.Out[2], o.In[0], o.In[1], o.In[2], o.In[3], sh(n))
		},
		func(o *Operands[T], n []int, f []float64) error {
			return mk(f, n[1]).GaussNewtonVJP(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], sh(n))
		},
	}
}
