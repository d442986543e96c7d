// seedport.cu: a port of the seed's row-jet design, kept only as a benchmark baseline for
// gj_jet_second_f64. One block per row; thread 0 alone builds every gate ζ_k as an order-2 jet
// (value, gradient[K], Hessian[K][K]) from exp and reciprocal jets, the whole K³ tower in shared
// memory; then the block's threads, one per output column, contract Σ_k H_k[a][b]·D[k][c].
// K (KK) and P (PP) are compile-time constants. Parameters follow gatejet.cu's convention:
// in0 logits [N,K], in1 decoded [N,K,P], out0 second [N,K,K,P], i0 = N, s = invTau.

struct Tower {
  double v;
  double g[KK];
  double h[KK][KK];
};

__device__ void tower_zero(Tower* t, double v) {
  t->v = v;
  for (int i = 0; i < KK; ++i) {
    t->g[i] = 0.0;
    for (int j = 0; j < KK; ++j) t->h[i][j] = 0.0;
  }
}

// o = f(a) for a scalar function with value f0, first f1 and second f2 derivatives at a.v.
__device__ void tower_apply(const Tower* a, double f0, double f1, double f2, Tower* o) {
  o->v = f0;
  for (int i = 0; i < KK; ++i) o->g[i] = f1 * a->g[i];
  for (int i = 0; i < KK; ++i)
    for (int j = 0; j < KK; ++j) o->h[i][j] = f1 * a->h[i][j] + f2 * a->g[i] * a->g[j];
}

__device__ void tower_product(const Tower* a, const Tower* b, Tower* o) {
  o->v = a->v * b->v;
  for (int i = 0; i < KK; ++i) o->g[i] = a->v * b->g[i] + a->g[i] * b->v;
  for (int i = 0; i < KK; ++i)
    for (int j = 0; j < KK; ++j)
      o->h[i][j] = a->v * b->h[i][j] + a->g[i] * b->g[j] + a->g[j] * b->g[i] + a->h[i][j] * b->v;
}

__device__ void tower_accumulate(Tower* acc, const Tower* a) {
  acc->v += a->v;
  for (int i = 0; i < KK; ++i) {
    acc->g[i] += a->g[i];
    for (int j = 0; j < KK; ++j) acc->h[i][j] += a->h[i][j];
  }
}

extern "C" __global__ void seedport_second_f64(const void* in0, const void* in1, const void* in2,
                                               const void* in3, void* out0, void* out1, void* out2,
                                               const double* floats, long long i0, long long i1,
                                               long long i2, long long tile, double s) {
  __shared__ Tower gate[KK];
  const long long row = blockIdx.x;
  if (row >= i0) return;  // whole block: no barrier is skipped by only some threads
  const double* L = (const double*)in0 + row * KK;
  const double* D = (const double*)in1 + row * KK * PP;
  double* S = (double*)out0 + row * KK * KK * PP;
  if (threadIdx.x == 0) {
    double mx = L[0];
    for (int j = 1; j < KK; ++j) mx = fmax(mx, L[j]);
    Tower ex[KK];
    Tower den, x;
    tower_zero(&den, 0.0);
    for (int j = 0; j < KK; ++j) {
      tower_zero(&x, s * (L[j] - mx));
      x.g[j] = s;
      const double e = exp(x.v);
      tower_apply(&x, e, e, e, &ex[j]);
      tower_accumulate(&den, &ex[j]);
    }
    Tower inv;
    const double u = den.v;
    tower_apply(&den, 1.0 / u, -1.0 / (u * u), 2.0 / (u * u * u), &inv);
    for (int k = 0; k < KK; ++k) tower_product(&ex[k], &inv, &gate[k]);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < PP; c += blockDim.x) {
    for (int a = 0; a < KK; ++a) {
      for (int b = 0; b < KK; ++b) {
        double acc = 0.0;
        for (int k = 0; k < KK; ++k) acc += gate[k].h[a][b] * D[k * PP + c];
        S[((long long)a * KK + b) * PP + c] = acc;
      }
    }
  }
}
