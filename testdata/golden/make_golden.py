#!/usr/bin/env python3
"""Write PyTorch float64 golden files for the softmax-gate row jet.

For each shape (N rows, K atoms, P output columns) this script draws logits and decoded
values from a seeded generator, builds the reconstruction of one row

    z_hat(l)[c] = sum_k softmax(s * l)[k] * decoded[k][c]

and differentiates it with torch.func: jacrev for the first channel and hessian for the
second, row by row, in float64. It writes one JSON file per shape next to this script:

    softmax_jet_N{N}_K{K}_P{P}.json = {
        "generator": "make_golden.py", "torch": <version>,
        "N": N, "K": K, "P": P, "inv_tau": s,
        "logits":  [N*K]        row-major,
        "decoded": [N*K*P]      decoded[(n*K + k)*P + c],
        "value":   [N*P],
        "first":   [N*K*P]      first[(n*K + a)*P + c]        = d z_hat[c] / d l[a],
        "second":  [N*K*K*P]    second[((n*K + a)*K + b)*P + c] = d2 z_hat[c] / d l[a] d l[b],
    }

The Go test cudaops/internal/emu TestGoldenPyTorch compares the emulated device kernels and
the CPU package softmaxjet with these files (float64, 1e-12 normwise). Usage:

    python3 testdata/golden/make_golden.py            # needs torch >= 2.0 (CPU is enough)
"""

import json
import os

import torch

SHAPES = [  # (N, K, P, inv_tau)
    (3, 1, 2, 1.0),
    (4, 5, 3, 0.7),
    (2, 8, 16, 1.3),
    (2, 16, 16, 1.0),
    (1, 40, 5, 2.0),
    (1, 128, 2, 0.5),
]


def reconstruction(logits_row, decoded_row, inv_tau):
    """One row: softmax gate (torch subtracts the max) times the decoded values."""
    gate = torch.softmax(inv_tau * logits_row, dim=0)
    return gate @ decoded_row


def main():
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(20240601)
    here = os.path.dirname(os.path.abspath(__file__))
    first_fn = torch.func.jacrev(reconstruction, argnums=0)
    second_fn = torch.func.hessian(reconstruction, argnums=0)
    for n, k, p, inv_tau in SHAPES:
        logits = 1.5 * torch.randn(n, k, generator=gen)
        decoded = torch.randn(n, k, p, generator=gen)
        value = torch.stack([reconstruction(logits[i], decoded[i], inv_tau) for i in range(n)])
        # jacrev gives [P, K] per row, hessian [P, K, K]: move the column index last.
        first = torch.stack([first_fn(logits[i], decoded[i], inv_tau).T for i in range(n)])
        second = torch.stack(
            [second_fn(logits[i], decoded[i], inv_tau).permute(1, 2, 0) for i in range(n)]
        )
        record = {
            "generator": "make_golden.py",
            "torch": torch.__version__,
            "N": n,
            "K": k,
            "P": p,
            "inv_tau": inv_tau,
            "logits": logits.flatten().tolist(),
            "decoded": decoded.flatten().tolist(),
            "value": value.flatten().tolist(),
            "first": first.flatten().tolist(),
            "second": second.flatten().tolist(),
        }
        path = os.path.join(here, f"softmax_jet_N{n}_K{k}_P{p}.json")
        with open(path, "w") as f:
            json.dump(record, f)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
