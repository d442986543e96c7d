#!/usr/bin/env python3
"""Times one Levenberg-Marquardt (damped Gauss-Newton) step over every row's codes of the
examples/digits model in PyTorch, float64 on the CPU, for comparison with the Go step
(BenchmarkGNStep in main_test.go, the same N, K, P, L):

    python3 examples/digits/torch_gn_step.py --n 1497 --k 8 --p 64 --basis 6
    go test ./examples/digits -run '^$' -bench GNStep -benchtime 20x -gnstep 1497,8,64,6

Per row, with codes p = (l, t) [2K], zeta = softmax(l/tau) and atom k's decoded row
d_k(t_k) = sum_b Phi_b(t_k) B[k,b] (cubic B-splines on uniform clamped knots over [0, 1]):

    zhat = sum_k zeta_k d_k(t_k)
    J = d zhat / d p                 [P, 2K]   torch.func.jacfwd under torch.func.vmap
    H = J^T J                        [2K, 2K]  the Gauss-Newton slab
    (H + (rho + mu) I) delta = -(J^T r + rho (p - p0)),  r = zhat - x   (Cholesky solve)

then the trial p + delta (coordinates clamped to [0, 1]) is evaluated and kept where it
lowers the row's objective 1/2 |r|^2 + 1/2 rho |p - p0|^2. torch.func is PyTorch 2.0's
name; on 1.13 (Debian's python3-torch) the same functions come from functorch, which this
script falls back to, saying which it used. Needs torch; the data are random (the step's
cost does not depend on them).
"""

import argparse
import time

import torch

try:
    from torch.func import jacfwd, vmap

    SOURCE = "torch.func"
except ImportError:  # PyTorch < 2.0
    from functorch import jacfwd, vmap

    SOURCE = "functorch"


def knots(L):
    """Clamped uniform knots on [0, 1] for L cubic B-splines, as examples/digits makes them."""
    inner = L - 3
    return torch.tensor([min(max(i - 3, 0), inner) / inner for i in range(L + 4)], dtype=torch.float64)


def bspline(t, u, L):
    """The L cubic B-splines on knots u at the coordinates t [K], by the Cox-de Boor
    recursion: [K, L]. The degree-0 indicators are constant in t, so autodiff gives the
    derivatives inside each knot interval; t equal to the last knot belongs to the last
    interval of positive length."""
    M = u.shape[0]
    t = t[:, None]
    last = M - 4 - 1  # index of the last interval of positive length: u[L-1] < u[L]
    lo, hi = u[:-1], u[1:]
    inside = (t >= lo) & (t < hi)
    at_end = (t == u[L]) & (torch.arange(M - 1) == last)
    n = (inside | at_end).to(t.dtype)  # [K, M-1], degree 0
    for q in range(1, 4):
        left_d = u[q:M - 1] - u[: M - 1 - q]
        right_d = u[q + 1:M] - u[1:M - q]
        a = torch.where(left_d > 0, (t - u[: M - 1 - q]) / torch.where(left_d > 0, left_d, 1.0), 0.0)
        b = torch.where(right_d > 0, (u[q + 1:M] - t) / torch.where(right_d > 0, right_d, 1.0), 0.0)
        n = a * n[:, :-1] + b * n[:, 1:]
    return n  # [K, L]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1497, help="rows")
    ap.add_argument("--k", type=int, default=8, help="atoms K (2K codes per row)")
    ap.add_argument("--p", type=int, default=64, help="pixels P")
    ap.add_argument("--basis", type=int, default=6, help="B-spline functions L per atom (>= 4)")
    ap.add_argument("--tau", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=20, help="timed steps after one warm-up step")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch's default)")
    args = ap.parse_args()
    if min(args.n, args.k, args.p, args.reps) < 1 or args.basis < 4 or not args.tau > 0:
        ap.error("want --n, --k, --p, --reps >= 1, --basis >= 4 and --tau > 0")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    N, K, P, L = args.n, args.k, args.p, args.basis
    s, rho = 1 / args.tau, 0.01 * 1.0  # sigma^2 * lambda, as the example's sigma = 0.1, lambda = 1

    g = torch.Generator().manual_seed(1)
    B = torch.rand(K, L, P, dtype=torch.float64, generator=g)
    x = torch.rand(N, P, dtype=torch.float64, generator=g)
    p = torch.cat([0.1 * torch.randn(N, K, dtype=torch.float64, generator=g),
                   torch.full((N, K), 0.5, dtype=torch.float64)], dim=1)
    p0 = torch.cat([torch.zeros(K, dtype=torch.float64), torch.full((K,), 0.5, dtype=torch.float64)])
    mu = torch.full((N,), 1e-3, dtype=torch.float64)
    u = knots(L)
    eye = torch.eye(2 * K, dtype=torch.float64)

    def zhat(pr):  # one row's codes [2K] -> reconstruction [P]
        zeta = torch.softmax(s * pr[:K], dim=0)
        d = torch.einsum("kb,kbc->kc", bspline(pr[K:], u, L), B)
        return zeta @ d

    value = vmap(zhat)
    jac = vmap(jacfwd(zhat))

    def objective(pr):
        r = value(pr) - x
        return 0.5 * (r * r).sum(1) + 0.5 * rho * ((pr - p0) ** 2).sum(1)

    def step(p, mu):
        r = value(p) - x                                  # [N, P]
        J = jac(p)                                        # [N, P, 2K]
        H = J.transpose(1, 2) @ J                         # [N, 2K, 2K]
        grad = torch.einsum("npa,np->na", J, r) + rho * (p - p0)
        A = H + (rho + mu)[:, None, None] * eye
        chol, info = torch.linalg.cholesky_ex(A)
        delta = torch.cholesky_solve(-grad[:, :, None], chol)[:, :, 0]
        delta = torch.where((info == 0)[:, None], delta, torch.zeros_like(delta))
        trial = p + delta
        trial[:, K:] = trial[:, K:].clamp(0, 1)
        better = objective(trial) < objective(p)
        p = torch.where(better[:, None], trial, p)
        mu = torch.where(better, (mu / 3).clamp(min=1e-12), (mu * 4).clamp(max=1e12))
        return p, mu

    with torch.no_grad():
        p, mu = step(p, mu)  # warm-up
        start = time.perf_counter()
        for _ in range(args.reps):
            p, mu = step(p, mu)
        per = (time.perf_counter() - start) / args.reps
    print(f"torch {torch.__version__} ({SOURCE}), {torch.get_num_threads()} threads: "
          f"N={N} K={K} P={P} L={L}: {per * 1e3:.2f} ms per Gauss-Newton step")


if __name__ == "__main__":
    main()
