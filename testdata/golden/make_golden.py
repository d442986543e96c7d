#!/usr/bin/env python3
"""Write PyTorch float64 golden files for gatejet's kernels.

Everything recorded here is computed by torch's reverse-mode autograd (torch.autograd.grad,
with create_graph=True for the higher orders), never by the closed forms of docs/math.md, so
the files are an independent check of the Go kernels. Inputs and upstream gradients are drawn
from one seeded generator; every number is float64 and written with Python's json, which
writes floats with repr and so round-trips them exactly.

Regenerate (CI never runs this: the generated files are committed). Debian's main archive has
a CPU build of PyTorch (1.13) for Debian's own Python, so call /usr/bin/python3 explicitly:

    apt-get update && apt-get install -y python3-torch
    /usr/bin/python3 testdata/golden/make_golden.py

It was run with Debian 12's python3-torch 1.13.1, which reports itself as "1.13.0a0" (the
version each file records). It uses only torch.autograd.grad, torch.softmax/log_softmax and
torch._softmax_backward_data/_log_softmax_backward_data (whose signature newer torch keeps),
no torch.func and no forward mode, so it runs on 1.13 and on newer torch alike. Regenerating
with the same torch gives the same bytes (the generator is seeded). The files are then checked by `go test ./...`: internal/golden reads them,
internal/conformance TestGolden* compares them with softmaxjet, backward and the Gorgonia ops
of package ops, and cudaops/internal/emu TestGoldenPyTorch with the emulated device kernels,
all at 1e-12 normwise relative error.

1. Row jet of the softmax gate. For each shape (N rows, K atoms, P output columns, inverse
   temperature s) the reconstruction of one row is

       z_hat(l, D)[c] = sum_k softmax(s * l)[k] * D[k][c]

   and the file softmax_jet_N{N}_K{K}_P{P}.json holds, rows stacked and row-major (the layouts
   of softmaxjet.Shape and cudaops.KernelJet*):

       "generator", "torch", "N", "K", "P", "inv_tau",
       "logits"  [N*K],  "decoded" [N*K*P]            decoded[(n*K + k)*P + c]
       "value"   [N*P]
       "first"   [N*K*P]     first[(n*K + a)*P + c]          = d z_hat[c] / d l[a]
       "second"  [N*K*K*P]   second[((n*K + a)*K + b)*P + c] = d2 z_hat[c] / d l[a] d l[b]
       "v"       [N*K]       a direction per row
       "hvp"     [N*K*P]     hvp[(n*K + a)*P + c] = sum_b second[..a][b][c] * v[n*K + b]
                             (reverse over reverse: the gradient of <first[.][c], v>)
       "gauss_newton" [N*K*K]  H[(n*K + a)*K + b] = sum_c first[a][c] * first[b][c]
       "value_vjp", "first_vjp", "second_vjp", "hvp_vjp", "gauss_newton_vjp": each
           {"g": upstream gradient with the channel's shape,
            "d_logits" [N*K], "d_decoded" [N*K*P] (and for hvp_vjp "d_v" [N*K])}
           the gradients of sum(g * channel) with respect to the logits, the decoded values
           (and the direction v), as softmaxjet.*VJP and cudaops.KernelJet*VJP write them.

2. Softmax-family backward along one axis. softmax_axis_{name}.json holds a tensor of
   "shape" with the reduction along "axis" (row-major, as backward.SoftmaxBackward):

       "x", "dy", "g"      the input, the upstream gradient on the output, and an upstream
                           gradient on dx for the double backward
       "softmax": {"y": softmax(x), "dx": the gradient of sum(dy * y) in x,
                   "grad_y", "grad_dy": the gradients of sum(g * dx(y, dy)) with y and dy
                   free variables (torch._softmax_backward_data differentiated by autograd;
                   backward.SoftmaxBackwardGrad)}
       "log_softmax": the same for log_softmax (y is the log-softmax output;
                   torch._log_softmax_backward_data; backward.LogSoftmaxBackwardGrad)
"""

import json
import os

import torch

JET_SHAPES = [  # (N, K, P, inv_tau): K = 1, K and P multiples of 4 and not; small, to keep the files small
    (3, 1, 2, 1.0),
    (4, 5, 3, 0.7),
    (2, 8, 8, 1.3),
    (1, 13, 9, 1.0),
    (1, 21, 3, 2.0),
    (1, 29, 1, 0.5),
]

AXIS_CASES = [  # (name, shape, axis): a middle axis and the last axis of a rank-3 tensor
    ("middle", (2, 5, 3), 1),
    ("last", (3, 2, 7), 2),
]


def jacobian(y, x):
    """J[i..., j...] = d y[i...] / d x[j...] by one reverse pass per element of y, keeping the
    graph so that J can be differentiated again."""
    flat = y.reshape(-1)
    rows = []
    for i in range(flat.numel()):
        if flat[i].requires_grad:
            (g,) = torch.autograd.grad(flat[i], x, retain_graph=True, create_graph=True, allow_unused=True)
        else:
            g = None
        rows.append(torch.zeros_like(x) if g is None else g)
    return torch.stack(rows).reshape(*y.shape, *x.shape)


def vjp(y, xs, g):
    """The gradients of sum(g * y) with respect to each of xs (zero where y does not depend
    on it)."""
    gs = torch.autograd.grad(y, xs, grad_outputs=g, retain_graph=True, allow_unused=True)
    return [torch.zeros_like(x) if d is None else d for x, d in zip(xs, gs)]


def flat(t):
    return t.detach().flatten().tolist()


def jet_row(l0, d0, v0, gs, inv_tau):
    """Every channel of one row and its VJPs, all from autograd. gs holds this row's upstream
    gradients keyed by channel."""
    l = l0.clone().requires_grad_(True)
    d = d0.clone().requires_grad_(True)
    v = v0.clone().requires_grad_(True)
    value = torch.softmax(inv_tau * l, dim=0) @ d  # [P]; torch subtracts the max
    first_t = jacobian(value, l)  # [P, K]
    second_t = jacobian(first_t, l)  # [P, K, K]
    hvp_t = jacobian(first_t @ v, l)  # [P, K]: d/dl <grad_l z_hat[c], v>
    first = first_t.transpose(0, 1)  # [K, P]
    second = second_t.permute(1, 2, 0)  # [K, K, P]
    hvp = hvp_t.transpose(0, 1)  # [K, P]
    gn = first @ first.transpose(0, 1)  # [K, K]
    out = {
        "value": value,
        "first": first,
        "second": second,
        "hvp": hvp,
        "gauss_newton": gn,
    }
    vjps = {}
    for name in ("value", "first", "second", "gauss_newton"):
        dl, dd = vjp(out[name], [l, d], gs[name])
        vjps[name + "_vjp"] = {"d_logits": dl, "d_decoded": dd}
    dl, dd, dv = vjp(hvp, [l, d, v], gs["hvp"])
    vjps["hvp_vjp"] = {"d_logits": dl, "d_decoded": dd, "d_v": dv}
    return out, vjps


def write(here, name, record):
    path = os.path.join(here, name)
    with open(path, "w") as f:
        json.dump(record, f)
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def make_jets(gen, here):
    for n, k, p, inv_tau in JET_SHAPES:
        logits = 1.5 * torch.randn(n, k, generator=gen)
        decoded = torch.randn(n, k, p, generator=gen)
        v = torch.randn(n, k, generator=gen)
        g = {
            "value": torch.randn(n, p, generator=gen),
            "first": torch.randn(n, k, p, generator=gen),
            "second": torch.randn(n, k, k, p, generator=gen),
            "hvp": torch.randn(n, k, p, generator=gen),
            "gauss_newton": torch.randn(n, k, k, generator=gen),  # not symmetric on purpose
        }
        rows = [
            jet_row(logits[i], decoded[i], v[i], {c: t[i] for c, t in g.items()}, inv_tau)
            for i in range(n)
        ]
        record = {
            "generator": "make_golden.py",
            "torch": torch.__version__,
            "N": n,
            "K": k,
            "P": p,
            "inv_tau": inv_tau,
            "logits": flat(logits),
            "decoded": flat(decoded),
            "v": flat(v),
        }
        for ch in ("value", "first", "second", "hvp", "gauss_newton"):
            record[ch] = flat(torch.stack([r[0][ch] for r in rows]))
        for ch in ("value", "first", "second", "hvp", "gauss_newton"):
            entry = {"g": flat(g[ch])}
            for key in rows[0][1][ch + "_vjp"]:
                entry[key] = flat(torch.stack([r[1][ch + "_vjp"][key] for r in rows]))
            record[ch + "_vjp"] = entry
        write(here, f"softmax_jet_N{n}_K{k}_P{p}.json", record)


def axis_family(x, dy, g, axis, forward, backward_data):
    """y = forward(x); dx by autograd of forward; the double backward by autograd of torch's
    own backward op with y and dy as free variables."""
    xr = x.clone().requires_grad_(True)
    y = forward(xr, axis)
    (dx,) = torch.autograd.grad(y, xr, grad_outputs=dy)
    yf = y.detach().clone().requires_grad_(True)
    dyf = dy.clone().requires_grad_(True)
    dx2 = backward_data(dyf, yf, axis, torch.float64)
    grad_y, grad_dy = torch.autograd.grad(dx2, (yf, dyf), grad_outputs=g)
    return {"y": flat(y), "dx": flat(dx), "grad_y": flat(grad_y), "grad_dy": flat(grad_dy)}


def make_axes(gen, here):
    for name, shape, axis in AXIS_CASES:
        x = 2.0 * torch.randn(*shape, generator=gen)
        dy = torch.randn(*shape, generator=gen)
        g = torch.randn(*shape, generator=gen)
        record = {
            "generator": "make_golden.py",
            "torch": torch.__version__,
            "shape": list(shape),
            "axis": axis,
            "x": flat(x),
            "dy": flat(dy),
            "g": flat(g),
            "softmax": axis_family(x, dy, g, axis, lambda t, a: torch.softmax(t, dim=a), torch._softmax_backward_data),
            "log_softmax": axis_family(
                x, dy, g, axis, lambda t, a: torch.log_softmax(t, dim=a), torch._log_softmax_backward_data
            ),
        }
        write(here, f"softmax_axis_{name}.json", record)


def main():
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(20240601)
    here = os.path.dirname(os.path.abspath(__file__))
    make_jets(gen, here)
    make_axes(gen, here)


if __name__ == "__main__":
    main()
