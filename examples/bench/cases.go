package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// bench holds the settings of one run and the rows measured so far.
type bench struct {
	tm    timer
	quick bool
	rows  []row
	log   func(format string, args ...any)
}

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	b.log("  %-22s %-16s %s %9s ms  vs %-26s %9s ms  %8s", r.Op, r.Shape, r.DType, ms(r.Gatejet), r.Baseline, ms(r.Other), ratio(r.Speedup()))
}

func (b *bench) time(f func() error) (time.Duration, int, error) {
	settle()
	return b.tm.median(f)
}

func inputs(sh softmaxjet.Shape, seed uint64) (l, d, v []float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(sh.K)))
	l, d, v = make([]float64, sh.LogitsLen()), make([]float64, sh.DecodedLen()), make([]float64, sh.LogitsLen())
	for i := range l {
		// Rounded to float32, so that both precisions see the same numbers.
		l[i], v[i] = float64(float32(1.5*rng.NormFloat64())), float64(float32(rng.NormFloat64()))
	}
	for i := range d {
		d[i] = float64(float32(rng.NormFloat64()))
	}
	return
}

func shapeName(sh softmaxjet.Shape) string { return fmt.Sprintf("N%d K%d P%d", sh.N, sh.K, sh.P) }

func dtName(dt tensor.Dtype) string {
	if dt == tensor.Float32 {
		return "f32"
	}
	return "f64"
}

func dtSize(dt tensor.Dtype) int64 {
	if dt == tensor.Float32 {
		return 4
	}
	return 8
}

// memclrProbe times clear() of a buffer of the given number of bytes (in float64s): the
// memory-limit probe of an operation that mostly writes.
func (b *bench) memclrProbe(bytes int64) (time.Duration, error) {
	buf := make([]float64, bytes/8)
	t, _, err := b.time(func() error { clear(buf); return nil })
	return t, err
}

// memclrRow times the memclr probe of an output of outLen elements of dt and returns the row of
// op (time t over reps) with the probe's bandwidth, the bytes of its output and of inLen input
// elements, and no agreement measured yet; and the probe's time.
func (b *bench) memclrRow(op string, sh softmaxjet.Shape, dt tensor.Dtype, t time.Duration, reps, outLen, inLen int) (row, time.Duration, error) {
	outBytes := int64(outLen) * dtSize(dt)
	probe, err := b.memclrProbe(outBytes)
	if err != nil {
		return row{}, 0, err
	}
	return row{Op: op, Shape: shapeName(sh), DType: dtName(dt), Gatejet: t, Bytes: outBytes + int64(inLen)*dtSize(dt),
		Probe: "memclr", ProbeBW: float64(outBytes) / probe.Seconds(), Agree: math.NaN(), Reps: reps}, probe, nil
}

// allocSink keeps the allocation probe's buffers alive, as a machine keeps its outputs.
var allocSink any

// allocProbe times make() of an output of the given length and element type in the steady
// state of repeated allocations: what a TapeMachine pays every run for the op's output after
// Reset (the Go runtime zeroes a reused large allocation in chunks).
func (b *bench) allocProbe(dt tensor.Dtype, n int) (time.Duration, error) {
	tm := b.tm
	tm.warm = max(tm.warm, machineWarm)
	settle()
	t, _, err := tm.median(func() error {
		if dt == tensor.Float32 {
			allocSink = make([]float32, n)
		} else {
			allocSink = make([]float64, n)
		}
		return nil
	})
	allocSink = nil
	return t, err
}

// copy3Probe times the plainest pass over three streams of n float64s (read y, read dy,
// write dx = y + dy), on one goroutine and split in two halves over two goroutines, and returns
// the faster: the memory-limit probe of the softmax backward.
func (b *bench) copy3Probe(n int) (time.Duration, string, error) {
	y, dy, dx := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		y[i], dy[i] = float64(i), 1
	}
	pass := func(lo, hi int) {
		d, a, c := dx[lo:hi], y[lo:hi], dy[lo:hi]
		a, c = a[:len(d)], c[:len(d)]
		for i := range d {
			d[i] = a[i] + c[i]
		}
	}
	one, _, err := b.time(func() error { pass(0, n); return nil })
	if err != nil {
		return 0, "", err
	}
	workers := par.Workers()
	split, _, err := b.time(func() error {
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			wg.Add(1)
			go func() { pass(w*n/workers, (w+1)*n/workers); wg.Done() }()
		}
		pass(0, n/workers)
		wg.Wait()
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	if split < one {
		return split, fmt.Sprintf("copy3 probe (%d goroutines)", workers), nil
	}
	return one, "copy3 probe (1 goroutine)", nil
}

// opTimes times an op two ways: on a TapeMachine with Reset between runs (warmed up until the
// heap settles: the machine allocates the op's output afresh every run), and by UsePreallocDo
// into a preallocated output. It returns both times, the timed repetitions of the first and
// the op's output.
func (b *bench) opTimes(tr *tapeRun, vals []*tensor.Dense) (tape, pre time.Duration, reps, preReps int, out []float64, err error) {
	tm := b.machineTimer()
	if tape, reps, err = tm.median(tr.run); err != nil {
		return
	}
	if err = tr.run(); err != nil {
		return
	}
	out = tr.value()
	op := tr.out.Op().(G.UsePreallocDoer)
	dst := tensor.New(tensor.WithShape(tr.out.Shape()...), tensor.Of(tr.out.Dtype()))
	args := make([]G.Value, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	pre, preReps, err = b.time(func() error { _, err := op.UsePreallocDo(dst, args...); return err })
	return
}

// machineTimer is the timer for TapeMachine runs: machineWarm warm-up runs and at least
// machineReps timed ones (runs with and without a collection alternate), fewer in quick mode;
// it collects garbage first.
func (b *bench) machineTimer() timer {
	tm := b.tm
	tm.warm = max(tm.warm, machineWarm)
	tm.reps = max(tm.reps, machineReps)
	if b.quick {
		tm.warm, tm.reps = 2, 3
	}
	settle()
	return tm
}

// machineWarm is the number of untimed runs of a TapeMachine before timing it: a machine that
// allocates a large output every run needs about that many for the heap to settle (before,
// runs fault pages in).
const machineWarm = 20

// machineReps is the least number of timed runs of a TapeMachine: its runs are of two kinds,
// with a garbage collection and without, so the median needs more of them to settle.
const machineReps = 25

// reuseTimes times the second channel on TapeMachines with ops.ReuseOutput in float64 and
// float32, interleaved (see timer.interleaved), so that the float32/float64 ratio is taken
// under the same memory conditions. It returns the two times, the repetitions and each
// machine's output.
func (b *bench) reuseTimes(sh softmaxjet.Shape, l, d []float64) (times []time.Duration, reps int, outs [2][]float64, err error) {
	var trs []*tapeRun
	defer func() {
		for _, tr := range trs {
			tr.close()
		}
	}()
	var fs []func() error
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tr, err := jetOpRun(dt, sh, l, d, nil, func(l, d, _ *G.Node) (*G.Node, error) {
			return ops.SoftmaxJetSecond(l, d, 1, ops.ReuseOutput())
		})
		if err != nil {
			return nil, 0, outs, err
		}
		trs = append(trs, tr)
		fs = append(fs, tr.run)
	}
	tm := b.machineTimer()
	if times, reps, err = tm.interleaved(fs...); err != nil {
		return nil, 0, outs, err
	}
	for i, tr := range trs {
		if err := tr.run(); err != nil {
			return nil, 0, outs, err
		}
		outs[i] = tr.value()
	}
	return times, reps, outs, nil
}

// secondCase: the second channel through ops.SoftmaxJetSecond on a TapeMachine — built with
// ops.ReuseOutput (one output buffer for every run; timed interleaved with the other dtype,
// see reuseTimes) and without (a new output each run) — and by
// UsePreallocDo, against the memclr probe, the make() of the output, the tower, finite
// differences of the first channel and (float32) the float64 op.
func (b *bench) secondCase(sh softmaxjet.Shape, target bool) error {
	l, d, _ := inputs(sh, 1)
	rt, reuseReps, reuseOuts, err := b.reuseTimes(sh, l, d)
	if err != nil {
		return err
	}
	var f64Tape, f64Pre time.Duration
	var f64Reuse row
	for i, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tr, err := jetOpRun(dt, sh, l, d, nil, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1) })
		if err != nil {
			return err
		}
		vals := []*tensor.Dense{dense(dt, []int{sh.N, sh.K}, l), dense(dt, []int{sh.N, sh.K, sh.P}, d)}
		tape, pre, reps, preReps, got, err := b.opTimes(tr, vals)
		tr.close()
		if err != nil {
			return err
		}
		if dd := maxRelDiff(reuseOuts[i], got); dd != 0 {
			return fmt.Errorf("second %v: the ReuseOutput op differs from the plain op by %g", dt, dd)
		}
		reuseRow, probe, err := b.memclrRow("second (op, Tape, ReuseOutput)", sh, dt, rt[i], reuseReps, sh.SecondLen(), sh.LogitsLen()+sh.DecodedLen())
		if err != nil {
			return err
		}
		tapeRow := reuseRow
		tapeRow.Op, tapeRow.Gatejet, tapeRow.Reps = "second (op, Tape)", tape, reps
		preRow := reuseRow
		preRow.Op, preRow.Gatejet, preRow.Reps = "second (op, UsePreallocDo)", pre, preReps
		for _, base := range []row{reuseRow, tapeRow, preRow} {
			r := base.vs("memclr probe (same bytes)", probe)
			if target && base.Op == reuseRow.Op {
				r.Target = 0.5
			}
			b.add(r)
		}
		// The default path (a new output every run) against ReuseOutput: within 2× is the
		// target, so that a user who never read about ReuseOutput does not pay much for it.
		r := tapeRow.vs("the op with ReuseOutput", rt[i])
		if target && dt == tensor.Float64 {
			r.Target = 0.5
		}
		b.add(r)
		alloc, err := b.allocProbe(dt, sh.SecondLen())
		if err != nil {
			return err
		}
		b.add(tapeRow.vs("make() of the output alone", alloc))

		// The tower (TowerChannels, second channel only) in the same element type.
		var tw time.Duration
		var ref []float64
		if dt == tensor.Float64 {
			out := make([]float64, sh.SecondLen())
			tw, _, err = b.time(func() error { return tower.TowerChannels(nil, nil, out, l, d, tower.Shape(sh), 1) })
			ref = out
		} else {
			out, l32, d32 := make([]float32, sh.SecondLen()), floats.To32(l), floats.To32(d)
			tw, _, err = b.time(func() error { return tower.TowerChannels(nil, nil, out, l32, d32, tower.Shape(sh), 1) })
			ref = floats.To64(out)
		}
		if err != nil {
			return err
		}
		for _, base := range []row{reuseRow, tapeRow} {
			r := base.vs("tower (TowerChannels)", tw).agreeing(maxRelDiff(got, ref))
			if target && dt == tensor.Float64 && base.Op == reuseRow.Op {
				r.Target = 20
			}
			b.add(r)
		}
		ref = nil

		if dt == tensor.Float64 {
			f64Reuse, f64Tape, f64Pre = reuseRow, tape, pre
			fd, out, err := b.fdSecond(sh, l, d)
			if err != nil {
				return err
			}
			b.add(reuseRow.vs("finite diff. of first (2K)", fd).agreeing(maxRelDiff(got, out)))
			continue
		}
		for _, c := range []struct {
			base  row
			other time.Duration
			what  string
		}{
			{reuseRow, f64Reuse.Gatejet, "the f64 op (2× the bytes, interleaved)"},
			{tapeRow, f64Tape, "the f64 op (2× the bytes)"},
			{preRow, f64Pre, "the f64 op (2× the bytes)"},
		} {
			r := c.base.vs(c.what, c.other)
			if target && c.base.Op == reuseRow.Op {
				r.Target = 1.6
			}
			b.add(r)
		}
	}
	return nil
}

// fdH is the step of the finite-difference baselines.
const fdH = 1e-5

// logitDiffs times central differences along each logit: for each atom a, lower (a channel
// one order down, stride elements a row) at the logits with logit a of every row moved by +h
// and by −h — rows are independent, so one pair of calls covers every row — and put(n, a, ·)
// receives row n's two results.
func (b *bench) logitDiffs(sh softmaxjet.Shape, l []float64, stride int, lower func(dst, l []float64) error,
	put func(n, a int, plus, minus []float64)) (time.Duration, error) {
	K := sh.K
	lp := append([]float64(nil), l...)
	fp, fm := make([]float64, sh.N*stride), make([]float64, sh.N*stride)
	t, _, err := b.time(func() error {
		for a := 0; a < K; a++ {
			for _, step := range []struct {
				h   float64
				dst []float64
			}{{fdH, fp}, {-fdH, fm}} {
				for n := 0; n < sh.N; n++ {
					lp[n*K+a] = l[n*K+a] + step.h
				}
				if err := lower(step.dst, lp); err != nil {
					return err
				}
			}
			for n := 0; n < sh.N; n++ {
				lp[n*K+a] = l[n*K+a]
				put(n, a, fp[n*stride:(n+1)*stride], fm[n*stride:(n+1)*stride])
			}
		}
		return nil
	})
	return t, err
}

// fdSecond is the second channel by central differences of the first channel in each logit:
// 2K calls of softmaxjet.Softmax.First, each giving one (a, b) column block of every row.
func (b *bench) fdSecond(sh softmaxjet.Shape, l, d []float64) (time.Duration, []float64, error) {
	K, P := sh.K, sh.P
	out := make([]float64, sh.SecondLen())
	t, err := b.logitDiffs(sh, l, K*P, func(dst, lp []float64) error { return softmaxjet.Softmax[float64]{InvTau: 1}.First(dst, lp, d, sh) },
		func(n, bb int, plus, minus []float64) {
			for a := 0; a < K; a++ {
				o := out[((n*K+a)*K+bb)*P : ((n*K+a)*K+bb+1)*P]
				for c := range o {
					o[c] = (plus[a*P+c] - minus[a*P+c]) / (2 * fdH)
				}
			}
		})
	return t, out, err
}

// firstCase: the first channel through ops.SoftmaxJetFirst on a TapeMachine, against
// Gorgonia's reverse-mode autodiff (P passes), the tower, finite differences of the value
// channel and the memclr probe.
func (b *bench) firstCase(sh softmaxjet.Shape) error {
	l, d, _ := inputs(sh, 2)
	tr, err := jetOpRun(tensor.Float64, sh, l, d, nil, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 1) })
	if err != nil {
		return err
	}
	t, _, reps, _, got, err := b.opTimes(tr, []*tensor.Dense{dense(tensor.Float64, []int{sh.N, sh.K}, l), dense(tensor.Float64, []int{sh.N, sh.K, sh.P}, d)})
	tr.close()
	if err != nil {
		return err
	}
	base, probe, err := b.memclrRow("first (op, Tape)", sh, tensor.Float64, t, reps, sh.FirstLen(), sh.LogitsLen()+sh.DecodedLen())
	if err != nil {
		return err
	}
	b.add(base.vs("memclr probe (same bytes)", probe))

	// The same op built with ops.ReuseOutput: no output allocated per run.
	tr, err = jetOpRun(tensor.Float64, sh, l, d, nil, func(l, d, _ *G.Node) (*G.Node, error) {
		return ops.SoftmaxJetFirst(l, d, 1, ops.ReuseOutput())
	})
	if err != nil {
		return err
	}
	tm := b.machineTimer()
	rt, rreps, err := tm.median(tr.run)
	tr.close()
	if err != nil {
		return err
	}
	reuse := base
	reuse.Op, reuse.Gatejet, reuse.Reps = "first (op, Tape, ReuseOutput)", rt, rreps
	b.add(reuse.vs("memclr probe (same bytes)", probe))
	b.add(reuse.vs("the op without ReuseOutput", t))

	gf, err := newGorgoniaFirst(sh, 1, l, d)
	if err != nil {
		return err
	}
	gt, _, err := b.time(gf.run)
	if err != nil {
		return err
	}
	for _, br := range []row{base, reuse} {
		b.add(br.vs(fmt.Sprintf("Gorgonia autodiff (%d passes)", sh.P), gt).agreeing(maxRelDiff(got, gf.out)))
	}
	gf.close()

	out := make([]float64, sh.FirstLen())
	tw, _, err := b.time(func() error { return tower.TowerChannels(nil, out, nil, l, d, tower.Shape(sh), 1) })
	if err != nil {
		return err
	}
	b.add(base.vs("tower (TowerChannels)", tw).agreeing(maxRelDiff(got, out)))

	P := sh.P
	fd, err := b.logitDiffs(sh, l, P, func(dst, lp []float64) error { return softmaxjet.Softmax[float64]{InvTau: 1}.Value(dst, lp, d, sh) },
		func(n, a int, plus, minus []float64) {
			o := out[(n*sh.K+a)*P : (n*sh.K+a+1)*P]
			for c := range o {
				o[c] = (plus[c] - minus[c]) / (2 * fdH)
			}
		})
	if err != nil {
		return err
	}
	b.add(base.vs("finite diff. of value (2K)", fd).agreeing(maxRelDiff(got, out)))
	return nil
}

// hvpCase: the Hessian-vector product (softmaxjet.Softmax.HVP) against building the second channel
// (softmaxjet.Softmax.Second) and contracting it with v over the cores, and (fd) finite differences of
// the first channel along v.
func (b *bench) hvpCase(sh softmaxjet.Shape, withSecond, fd bool, target float64) error {
	l, d, v := inputs(sh, 3)
	out := make([]float64, sh.FirstLen())
	t, reps, err := b.time(func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.HVP(out, l, d, v, sh) })
	if err != nil {
		return err
	}
	base, probe, err := b.memclrRow("HVP (kernel)", sh, tensor.Float64, t, reps, sh.FirstLen(), 2*sh.LogitsLen()+sh.DecodedLen())
	if err != nil {
		return err
	}
	b.add(base.vs("memclr probe (same bytes)", probe))
	if withSecond {
		sec := make([]float64, sh.SecondLen())
		con := make([]float64, sh.FirstLen())
		job := &contractJob{sec: sec, v: v, out: con, K: sh.K, P: sh.P}
		job.run = job.do
		st, _, err := b.time(func() error {
			if err := (softmaxjet.Softmax[float64]{InvTau: 1}).Second(sec, l, d, sh); err != nil {
				return err
			}
			par.For(sh.N, sh.K*sh.K*sh.P, job.run)
			return nil
		})
		if err != nil {
			return err
		}
		r := base.vs("Second + contract with v", st).agreeing(maxRelDiff(out, con))
		r.Target = target
		b.add(r)
	}
	if fd {
		lp := make([]float64, len(l))
		fp, fm, fdOut := make([]float64, sh.FirstLen()), make([]float64, sh.FirstLen()), make([]float64, sh.FirstLen())
		ft, _, err := b.time(func() error {
			for i := range l {
				lp[i] = l[i] + fdH*v[i]
			}
			if err := (softmaxjet.Softmax[float64]{InvTau: 1}).First(fp, lp, d, sh); err != nil {
				return err
			}
			for i := range l {
				lp[i] = l[i] - fdH*v[i]
			}
			if err := (softmaxjet.Softmax[float64]{InvTau: 1}).First(fm, lp, d, sh); err != nil {
				return err
			}
			for i := range fdOut {
				fdOut[i] = (fp[i] - fm[i]) / (2 * fdH)
			}
			return nil
		})
		if err != nil {
			return err
		}
		b.add(base.vs("finite diff. of first along v", ft).agreeing(maxRelDiff(out, fdOut)))
	}
	return nil
}

// contractJob is out[n][a][c] = Σ_b second[n][a][b][c]·v[n][b], rows spread over the cores.
type contractJob struct {
	sec, v, out []float64
	K, P        int
	run         func(lo, hi int)
}

func (j *contractJob) do(lo, hi int) {
	K, P := j.K, j.P
	for n := lo; n < hi; n++ {
		for a := 0; a < K; a++ {
			o := j.out[(n*K+a)*P : (n*K+a)*P+P]
			clear(o)
			for bb := 0; bb < K; bb++ {
				vb := j.v[n*K+bb]
				s := j.sec[((n*K+a)*K+bb)*P : ((n*K+a)*K+bb)*P+P]
				s = s[:len(o)]
				for c := range o {
					o[c] += s[c] * vb
				}
			}
		}
	}
}

// backwardCase: the softmax backward along an axis through gatejet's op (ops.SoftmaxBackward)
// against Gorgonia's own softmax gradient op on the same (y, dy), both by UsePreallocDo into a
// preallocated output: only the gradient computation is timed, not a forward pass or a
// machine. lastAxis is gatejet's last-axis time on the same shape (for the strided axis).
func (b *bench) backwardCase(dt tensor.Dtype, shape []int, axis int, lastAxis *time.Duration, probeT time.Duration, probeName string, target float64) error {
	n := 1
	for _, s := range shape {
		n *= s
	}
	rng := rand.New(rand.NewPCG(4, uint64(axis+10)))
	// y: a softmax along the axis of random logits; dy random.
	yv, dyv := make([]float64, n), make([]float64, n)
	for i := range yv {
		yv[i] = math.Exp(rng.NormFloat64())
		dyv[i] = rng.NormFloat64()
	}
	outer, m, inner, err := layout(shape, axis)
	if err != nil {
		return err
	}
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			sum := 0.0
			for k := 0; k < m; k++ {
				sum += yv[(o*m+k)*inner+i]
			}
			for k := 0; k < m; k++ {
				yv[(o*m+k)*inner+i] /= sum
			}
		}
	}
	y, dy := dense(dt, shape, yv), dense(dt, shape, dyv)
	ours, theirs, err := softmaxGrads(dt, shape, axis)
	if err != nil {
		return err
	}
	outOurs, outTheirs := tensor.New(tensor.WithShape(shape...), tensor.Of(dt)), tensor.New(tensor.WithShape(shape...), tensor.Of(dt))
	t, reps, err := b.time(func() error { _, err := ours.UsePreallocDo(outOurs, y, dy); return err })
	if err != nil {
		return err
	}
	gt, _, err := b.time(func() error { _, err := theirs.UsePreallocDo(outTheirs, y, y, dy); return err })
	if err != nil {
		return err
	}
	bytes := 3 * int64(n) * dtSize(dt)
	probeBytes := 3 * int64(n) * 8
	base := row{Op: fmt.Sprintf("softmax backward axis %d", axis), Shape: fmt.Sprintf("%d×%d", shape[0], shape[1]), DType: dtName(dt),
		Gatejet: t, Bytes: bytes, Probe: "copy3", ProbeBW: float64(probeBytes) / probeT.Seconds(), Agree: math.NaN(), Reps: reps}
	r := base.vs("Gorgonia softmax grad op", gt).agreeing(maxRelDiff(elements(outOurs), elements(outTheirs)))
	r.Target = target
	b.add(r)
	if lastAxis != nil && *lastAxis == 0 {
		*lastAxis = t
		if dt == tensor.Float64 {
			r = base.vs(probeName+" (same bytes)", probeT)
			r.Target = 1 / 1.5
			if target == 0 {
				r.Target = 0
			}
			b.add(r)
		}
	} else if lastAxis != nil {
		r = base.vs("gatejet, last axis", *lastAxis)
		r.Target = 0.5
		b.add(r)
	}
	return nil
}

func layout(shape []int, axis int) (outer, n, inner int, err error) {
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis >= len(shape) {
		return 0, 0, 0, fmt.Errorf("axis %d of %v", axis, shape)
	}
	outer, inner = 1, 1
	for _, s := range shape[:axis] {
		outer *= s
	}
	for _, s := range shape[axis+1:] {
		inner *= s
	}
	return outer, shape[axis], inner, nil
}
