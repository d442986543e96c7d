#!/usr/bin/env python3
"""Write PyTorch float64 golden files for gatejet's coordinate jets (docs/math.md, "Latent
coordinates").

As make_golden.py beside it, everything recorded here comes from torch's reverse-mode autograd
(torch.autograd.grad, create_graph=True for the higher orders), never from the closed forms,
so the files are an independent check of softmaxjet.Coord* and of the ops
ops.{Softmax,Logistic}CoordJet*. Inputs and upstream gradients come from one seeded generator;
every number is float64, written by Python's json (repr round-trips exactly), gzipped with a
zero timestamp so that a rerun with the same torch gives the same bytes.

Regenerate (CI never runs this; the files are committed), with Debian's python3-torch:

    apt-get update && apt-get install -y python3-torch
    /usr/bin/python3 testdata/golden/make_coord_golden.py

It uses only torch.autograd.grad, torch.softmax and torch.sigmoid, so it runs on Debian 12's
torch 1.13 ("1.13.0a0", the version each file records) and on newer torch alike. The files are
read by internal/golden (CoordJets) and checked by the tests of softmaxjet and ops.

The row function. A row has logits l[K] and, per atom k, a decoded row that is a function of a
latent coordinate t_k. The inputs d0, d1, d2 [K][P] are taken as the Taylor coefficients of
that function at the row's coordinates: with offsets tau[K] (all zero, the point where the
jet is taken),

    d_k(tau_k)[c] = d0[k][c] + d1[k][c]·tau_k + d2[k][c]·tau_k²/2
    z_hat[c]      = sum_k gate(l)_k · d_k(tau_k)[c]
    gate(l)       = softmax(inv_tau·l)                          (gate "softmax")
                  = sigmoid(alpha_k·l_k + beta_k) per atom        (gate "logistic")

so that d0, d1, d2 are the value and the first two derivatives in t at tau = 0, any basis
being a special case, and their gradients are those the ops pass on to d0, d1, d2. The
primaries are p = (l_1..l_K, tau_1..tau_K); autograd differentiates z_hat in p.

A file coord_jet_{gate}_{tag}_N{N}_K{K}_P{P}.json.gz holds, rows stacked and row-major (the
layouts of softmaxjet.CoordFirst and its siblings):

    "generator", "torch", "gate", "N", "K", "P",
    "inv_tau"           (softmax)  or  "alpha", "beta" [K]  (logistic)
    "logits" [N*K],  "d0", "d1", "d2" [N*K*P]
    "v"      [N*2K]                 a direction over the 2K primaries per row
    "first"  [N*2K*P]               first[(n*2K + a)*P + c]  = d z_hat[c] / d p[a]
    "second" [N*2K*2K*P]            second[((n*2K + a)*2K + b)*P + c] = d2 z_hat[c] / d p[a] d p[b]
    "hvp"    [N*2K*P]               hvp[(n*2K + a)*P + c] = sum_b second[..a][b][c]·v[n*2K + b]
                                    (reverse over reverse: the gradient of <first[.][c], v> in p)
    "gauss_newton" [N*2K*2K]        H[(n*2K + a)*2K + b] = sum_c first[a][c]·first[b][c]
    "first_vjp", "second_vjp", "hvp_vjp", "gauss_newton_vjp": each
        {"g": an upstream gradient of the channel's shape (not symmetric),
         "d_logits" [N*K], "d_d0", "d_d1" [N*K*P], and "d_d2" [N*K*P] for second and hvp,
         "d_v" [N*2K] for hvp}
        the gradients of sum(g * channel) in the logits, d0, d1 (d2, v). first and
        gauss_newton do not depend on d2: they have no "d_d2".
    "evidence" (softmax only): {"log_sigma", "log_lambda", "w" [N],
        "logdet" [N]      logdet[n] = log det(H_n/sigma^2 + lambda·I), H_n the gauss_newton slab,
        "d_logits" [N*K], "d_d0", "d_d1" [N*K*P], "d_inv_tau", "d_log_sigma", "d_log_lambda"}
        the gradients of sum_n w[n]·logdet[n], with the temperature, sigma and lambda as
        variables (graphs.CoordGaussNewtonLogDet).

The cases: both gates, K = 1 and larger, P = 1 and larger; softmax at inv_tau 1e-3 (nearly
uniform gate, logit rows scaled down), 1e3 with logits of order 1e-3 and an exact tie (a cold
gate whose scaled logits are of order 1), and near-ties (logits equal to 1e-9, one pair exactly
equal); logistic with alpha of both signs and of order 1e-2 to 8, some atoms saturated.
"""

import gzip
import json
import os

import torch

from make_golden import flat, jacobian, vjp  # the same autograd helpers as the row jets' files

# (gate, tag, N, K, P, inv_tau, logit kind)
CASES = [
    ("softmax", "unit", 3, 1, 2, 1.0, "normal"),
    ("softmax", "warm", 2, 3, 4, 0.7, "normal"),
    ("softmax", "wide", 1, 6, 5, 2.0, "normal"),
    ("softmax", "hot", 2, 4, 3, 1e-3, "normal"),
    ("softmax", "cold", 2, 4, 3, 1e3, "small_tie"),
    ("softmax", "tied", 2, 5, 2, 1.3, "near_tie"),
    ("softmax", "p1", 2, 4, 1, 1.0, "normal"),
    ("logistic", "unit", 3, 1, 2, None, "normal"),
    ("logistic", "mixed", 2, 4, 3, None, "normal"),
    ("logistic", "wide", 1, 6, 4, None, "normal"),
]


def coord_row(l0, d00, d10, d20, v0, gs, gate):
    """Every channel of one row and its VJPs, all from autograd."""
    K = l0.shape[0]
    l = l0.clone().requires_grad_(True)
    d0 = d00.clone().requires_grad_(True)
    d1 = d10.clone().requires_grad_(True)
    d2 = d20.clone().requires_grad_(True)
    v = v0.clone().requires_grad_(True)
    tau = torch.zeros(K, requires_grad=True)
    p = torch.cat([l, tau])  # the primaries; autograd differentiates in p
    lp, tp = p[:K], p[K:]
    dk = d0 + d1 * tp[:, None] + 0.5 * d2 * (tp * tp)[:, None]  # [K, P]
    value = gate(lp) @ dk  # [P]
    first_t = jacobian(value, p)  # [P, 2K]
    second_t = jacobian(first_t, p)  # [P, 2K, 2K]
    hvp_t = jacobian(first_t @ v, p)  # [P, 2K]
    first = first_t.transpose(0, 1)
    second = second_t.permute(1, 2, 0)
    hvp = hvp_t.transpose(0, 1)
    gn = first @ first.transpose(0, 1)
    out = {"first": first, "second": second, "hvp": hvp, "gauss_newton": gn}
    vjps = {}
    for name in ("first", "gauss_newton"):
        dl, dd0, dd1 = vjp(out[name], [l, d0, d1], gs[name])
        vjps[name] = {"d_logits": dl, "d_d0": dd0, "d_d1": dd1}
    dl, dd0, dd1, dd2 = vjp(second, [l, d0, d1, d2], gs["second"])
    vjps["second"] = {"d_logits": dl, "d_d0": dd0, "d_d1": dd1, "d_d2": dd2}
    dl, dd0, dd1, dd2, dv = vjp(hvp, [l, d0, d1, d2, v], gs["hvp"])
    vjps["hvp"] = {"d_logits": dl, "d_d0": dd0, "d_d1": dd1, "d_d2": dd2, "d_v": dv}
    return out, vjps


def evidence(l0, d00, d10, inv_tau, log_sigma, log_lambda, w):
    """The evidence term of graphs.CoordGaussNewtonLogDet, out[r] = log det(H_r/sigma^2 +
    lambda·I) with H_r = J_r^T J_r over the primaries (l, tau) of the softmax gate, and the
    gradients of sum_r w_r·out[r] in the logits, d0, d1, the inverse temperature, log sigma
    and log lambda: autograd through the Jacobian (create_graph) and torch.logdet, the
    temperature a tensor like the others."""
    n, k = l0.shape
    l = l0.clone().requires_grad_(True)
    d0 = d00.clone().requires_grad_(True)
    d1 = d10.clone().requires_grad_(True)
    s = torch.tensor(inv_tau, requires_grad=True)
    ls = torch.tensor(log_sigma, requires_grad=True)
    ll = torch.tensor(log_lambda, requires_grad=True)
    out = []
    for r in range(n):
        tau = torch.zeros(k, requires_grad=True)
        p = torch.cat([l[r], tau])
        value = torch.softmax(s * p[:k], dim=0) @ (d0[r] + d1[r] * p[k:, None])
        J = jacobian(value, p)  # [P, 2K]
        A = J.transpose(0, 1) @ J / torch.exp(2 * ls) + torch.exp(ll) * torch.eye(2 * k)
        out.append(torch.logdet(A))
    out = torch.stack(out)
    grads = torch.autograd.grad((w * out).sum(), [l, d0, d1, s, ls, ll])
    rec = {"log_sigma": log_sigma, "log_lambda": log_lambda, "w": flat(w), "logdet": flat(out)}
    for name, g in zip(["d_logits", "d_d0", "d_d1", "d_inv_tau", "d_log_sigma", "d_log_lambda"], grads):
        rec[name] = g.item() if g.dim() == 0 else flat(g)
    return rec


def make_logits(gen, kind, n, k):
    if kind == "normal":
        return 1.5 * torch.randn(n, k, generator=gen)
    if kind == "small_tie":  # of order 1e-3, atoms 0 and 1 tied exactly
        x = 1e-3 * torch.randn(n, k, generator=gen)
        if k > 1:
            x[:, 1] = x[:, 0]
        return x
    if kind == "near_tie":  # 0.25 + 1e-9·noise, atoms 0 and 1 tied exactly
        x = 0.25 + 1e-9 * torch.randn(n, k, generator=gen)
        if k > 1:
            x[:, 1] = x[:, 0]
        return x
    raise ValueError(kind)


def write(here, name, record):
    path = os.path.join(here, name)
    data = (json.dumps(record) + "\n").encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"wrote {path} ({os.path.getsize(path)} bytes, {len(data)} uncompressed)")


def main():
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(20261127)
    here = os.path.dirname(os.path.abspath(__file__))
    for gate_name, tag, n, k, p, inv_tau, kind in CASES:
        logits = make_logits(gen, kind, n, k)
        d0 = torch.randn(n, k, p, generator=gen)
        d1 = torch.randn(n, k, p, generator=gen)
        d2 = torch.randn(n, k, p, generator=gen)
        v = torch.randn(n, 2 * k, generator=gen)
        record = {"generator": "make_coord_golden.py", "torch": torch.__version__, "gate": gate_name, "N": n, "K": k, "P": p}
        if gate_name == "softmax":
            record["inv_tau"] = inv_tau
            gate = lambda x, s=inv_tau: torch.softmax(s * x, dim=0)  # noqa: E731
        else:
            # alpha of both signs, from 1e-2 to 8 in magnitude; beta spreads the atoms over the
            # sigmoid, the large ones saturating it.
            mag = torch.tensor([0.8, 1e-2, 8.0, 2.5, 0.3, 4.0])[:k]
            sign = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])[:k]
            alpha = sign * mag
            beta = torch.randn(k, generator=gen)
            record["alpha"], record["beta"] = flat(alpha), flat(beta)
            gate = lambda x, a=alpha, b=beta: torch.sigmoid(a * x + b)  # noqa: E731
        g = {
            "first": torch.randn(n, 2 * k, p, generator=gen),
            "second": torch.randn(n, 2 * k, 2 * k, p, generator=gen),
            "hvp": torch.randn(n, 2 * k, p, generator=gen),
            "gauss_newton": torch.randn(n, 2 * k, 2 * k, generator=gen),
        }
        rows = [
            coord_row(logits[i], d0[i], d1[i], d2[i], v[i], {c: t[i] for c, t in g.items()}, gate)
            for i in range(n)
        ]
        record.update({"logits": flat(logits), "d0": flat(d0), "d1": flat(d1), "d2": flat(d2), "v": flat(v)})
        for ch in ("first", "second", "hvp", "gauss_newton"):
            record[ch] = flat(torch.stack([r[0][ch] for r in rows]))
        for ch in ("first", "second", "hvp", "gauss_newton"):
            entry = {"g": flat(g[ch])}
            for key in rows[0][1][ch]:
                entry[key] = flat(torch.stack([r[1][ch][key] for r in rows]))
            record[ch + "_vjp"] = entry
        if gate_name == "softmax":
            # From a generator of its own, so that the other fields do not depend on it.
            egen = torch.Generator().manual_seed(n * 1000 + k * 10 + p)
            log_sigma = float(0.5 * torch.randn(1, generator=egen)) - 1.0
            log_lambda = float(torch.randn(1, generator=egen)) - 1.0
            w = 0.5 + torch.rand(n, generator=egen)
            record["evidence"] = evidence(logits, d0, d1, inv_tau, log_sigma, log_lambda, w)
        write(here, f"coord_jet_{gate_name}_{tag}_N{n}_K{k}_P{p}.json.gz", record)


if __name__ == "__main__":
    main()
