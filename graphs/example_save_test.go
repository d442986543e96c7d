package graphs_test

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// model is a small softmax-gated reconstruction: logits = X·W, pred = SoftmaxJetValue(
// logits, D, 1), trained on loss = mean((pred − Y)²) + 0.01·CurvaturePenalty. W and D are
// learnable; X and Y are data.
type model struct {
	g          *G.ExprGraph
	learnables G.Nodes // W, D: the model's state
	pred, loss *G.Node
}

// newModel builds the model's graph. It is called once to train and once to restore: the
// graph is code, the learnables' values are the state.
func newModel() *model {
	const n, d, k, p = 4, 3, 3, 2
	g := G.NewGraph()
	seq := func(n int, scale float64) *tensor.Dense {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * float64((i*7)%11-5)
		}
		return tensor.New(tensor.WithBacking(v))
	}
	value := func(s ...int) func(scale float64) G.NodeConsOpt {
		return func(scale float64) G.NodeConsOpt {
			t := seq(tensor.Shape(s).TotalSize(), scale)
			if err := t.Reshape(s...); err != nil {
				log.Fatal(err)
			}
			return G.WithValue(t)
		}
	}
	X := G.NewMatrix(g, tensor.Float64, G.WithShape(n, d), G.WithName("X"), value(n, d)(0.2))
	Y := G.NewMatrix(g, tensor.Float64, G.WithShape(n, p), G.WithName("Y"), value(n, p)(0.1))
	W := G.NewMatrix(g, tensor.Float64, G.WithShape(d, k), G.WithName("W"), value(d, k)(0.1))
	D := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("D"), value(n, k, p)(0.05))
	logits := G.Must(G.Mul(X, W))
	pred, err := ops.SoftmaxJetValue(logits, D, 1)
	if err != nil {
		log.Fatal(err)
	}
	penalty, err := graphs.CurvaturePenalty(logits, D, 1, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	loss := G.Must(G.Add(G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(pred, Y)))))), penalty))
	return &model{g: g, learnables: G.Nodes{W, D}, pred: pred, loss: loss}
}

// predict runs the model forward and returns a copy of its predictions.
func (m *model) predict() []float64 {
	var v G.Value
	G.Read(m.pred, &v)
	vm := G.NewTapeMachine(m.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	return append([]float64(nil), v.Data().([]float64)...)
}

// A trained model is saved by saving the values of its learnable nodes: the ops of packages
// ops and graphs hold no learned state (temperatures and the like are constants of the code
// that builds the graph), so gob-encoding the *tensor.Dense values is enough. Restoring is
// building the same graph again and binding the saved values with gorgonia.Let; the
// restored model predicts the same numbers, bit for bit.
func Example_saveAndRestore() {
	// Train: Adam on a TapeMachine, gradients from gorgonia.Grad.
	trained := newModel()
	if _, err := G.Grad(trained.loss, trained.learnables...); err != nil {
		log.Fatal(err)
	}
	vm := G.NewTapeMachine(trained.g, G.BindDualValues(trained.learnables...))
	solver := G.NewAdamSolver(G.WithLearnRate(0.05))
	var first, last float64
	for step := 0; step < 50; step++ {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			log.Fatal(err)
		}
		last = trained.loss.Value().Data().(float64)
		if step == 0 {
			first = last
		}
		if err := solver.Step(G.NodesToValueGrads(trained.learnables)); err != nil {
			log.Fatal(err)
		}
	}
	vm.Close()
	fmt.Printf("trained: loss %.4f → %.4f\n", first, last)

	// Save: the learnables' values by name (a file works the same as this buffer).
	var file bytes.Buffer
	state := map[string]*tensor.Dense{}
	for _, n := range trained.learnables {
		state[n.Name()] = n.Value().(*tensor.Dense)
	}
	if err := gob.NewEncoder(&file).Encode(state); err != nil {
		log.Fatal(err)
	}

	// Restore: the same graph built again, the saved values bound to its learnables.
	restored := newModel()
	var saved map[string]*tensor.Dense
	if err := gob.NewDecoder(&file).Decode(&saved); err != nil {
		log.Fatal(err)
	}
	for _, n := range restored.learnables {
		v, ok := saved[n.Name()]
		if !ok {
			log.Fatalf("no saved value for %s", n.Name())
		}
		if err := G.Let(n, v); err != nil {
			log.Fatal(err)
		}
	}

	want, got := trained.predict(), restored.predict()
	same := len(want) == len(got)
	for i := range want {
		same = same && want[i] == got[i]
	}
	fmt.Println("restored predictions equal the trained model's bit for bit:", same)
	fmt.Println("a fresh model's differ:", fmt.Sprint(newModel().predict()) != fmt.Sprint(want))
	// Output:
	// trained: loss 0.1029 → 0.0003
	// restored predictions equal the trained model's bit for bit: true
	// a fresh model's differ: true
}
