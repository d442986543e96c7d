// gatejet.cu: every gatejet device kernel, for float and double, in one source text.
//
// The same text is compiled three ways:
//   - by NVRTC at run time (build tag `cuda`), for the device's own architecture, with
//     -DGJ_FAMILY_<F>, -DGJ_ENTRIES=… and -DGJ_WANT_F32 / -DGJ_WANT_F64 choosing what one
//     module holds;
//   - by the host C++ compiler inside cudaops/internal/emu (-DGJ_EMU, everything enabled),
//     after a header that emulates threadIdx, blockIdx, blockDim, gridDim, __syncthreads,
//     __syncwarp and dynamic shared memory, so that `go test ./...` runs these very kernels
//     without a GPU.
//
// Conventions (see cudaops/kernel.go for the argument order of every kernel):
//   - Every entry point takes the 14 fields of GjArgs as separate 8-byte parameters, in order:
//     in0..in3, out0..out2 (device pointers, unused ones null), floats (device pointer to the
//     logistic α then β, or null), i0, i1, i2 (the Ints of the Call), tile (the launch plan's
//     column tile for row-jet kernels, slab width for axis kernels), s (the inverse
//     temperature of softmax-gate kernels) and in4 (a fifth input, or null).
//   - Whatever the element type T, everything is computed in double; each output is rounded to
//     T once, when it is stored. The one exception follows softmaxjet's float32 path: the
//     float32 second channel computes its blocks in float (jet_second_f32_body).
//   - Row-jet kernels: one block per row (grid-stride over rows), or, in the warp-per-row
//     variants (GjWarp, entry points gj_<kernel>_warp_<dtype>), one warp per row and a row per
//     warp of the block. The gate ζ and, per column tile, the centred decoded values
//     e[a][c] = D[a][c] − m_c live in shared memory; outputs are written by all threads of the
//     row's group with consecutive threads on consecutive columns c (coalesced).
//   - Reductions have a fixed order that does not depend on the block size: sums over columns
//     run sequentially in c (across tiles too), sums over atoms sequentially in k or along a
//     fixed pairwise tree over the next power of two of K. No atomics anywhere.
//   - Every barrier (GJ_SYNC: __syncthreads, or __syncwarp in a warp variant) is reached by
//     every thread of its group: loops that contain one have group-uniform trip counts, and no
//     thread returns early.
//   - Dynamic shared memory is carved in doubles, in the order cudaops/internal/launch sizes it.

#ifndef GJ_EMU
#define GJ_DEV __device__ __forceinline__
#define GJ_KERNEL extern "C" __global__ void __launch_bounds__(256)
#define GJ_WARP_KERNEL extern "C" __global__ void __launch_bounds__(256, 2)
#define GJ_SMEM_DECL extern __shared__ double gj_smem[]
#define GJ_TAKE(p, n) gj_take_ptr(&(p), (n))
GJ_DEV double* gj_take_ptr(double** p, long long n) {
  double* r = *p;
  *p += n;
  return r;
}
#endif

#if defined(GJ_EMU)
#define GJ_ALL_FAMILIES 1
#define GJ_WANT_F32 1
#define GJ_WANT_F64 1
#endif

typedef long long gj_ll;
typedef unsigned int gj_u;

struct GjArgs {
  const void* in[4];
  void* out[3];
  const double* floats;
  gj_ll i0, i1, i2;
  gj_ll tile;
  double s;
  const void* in4;  // a fifth input (the coordinate HVP's v); last, so the others keep their places
};

GJ_DEV gj_ll gj_min(gj_ll a, gj_ll b) { return a < b ? a : b; }
GJ_DEV gj_ll gj_pow2(gj_ll k) {
  gj_ll p = 1;
  while (p < k) p <<= 1;
  return p;
}
// Odd row stride (in doubles) of a K×CT tile: consecutive atoms land on different banks.
GJ_DEV gj_ll gj_stride(gj_ll ct) { return ct | 1; }
GJ_DEV double gj_neg_inf() { return __longlong_as_double((gj_ll)0xfff0000000000000ULL); }

// The thread group that computes one row of a row-jet kernel: the template parameter Grp of the
// row-jet helpers and bodies. GjBlock: the whole block, one row at a time per block, meeting at
// __syncthreads. GjWarp (the warp-per-row variants, entry points gj_<kernel>_warp_<dtype>):
// each warp of the block is a group of its own with its own row, meeting at __syncwarp, so a
// block of 8 warps runs 8 rows with no block barrier. Each group carves
// its shared memory, in the same layout, from its own region: region(gj_smem) is the block's
// dynamic shared memory split evenly between its warps (launch.Plan gives the warp variant its
// row layout times the warps of the block).
// GJ_SYNC(): the group's barrier, written out at each use (not a function of the policy) so that
// every barrier stays a textual call site of its own, which the emulator's barrier check needs.
#define GJ_SYNC()          \
  do {                     \
    if (Grp::kWarp)        \
      __syncwarp();        \
    else                   \
      __syncthreads();     \
  } while (0)
struct GjBlock {
  static const bool kWarp = false;
  static GJ_DEV gj_ll t() { return threadIdx.x; }
  static GJ_DEV gj_ll nt() { return blockDim.x; }
  static GJ_DEV gj_u tu() { return threadIdx.x; }
  static GJ_DEV gj_u ntu() { return blockDim.x; }
  static GJ_DEV gj_ll row0() { return blockIdx.x; }
  static GJ_DEV gj_ll rowstep() { return gridDim.x; }
  static GJ_DEV double* region(double* smem) { return smem; }
};
// The warp width, 32, as NVVM cannot see it (PTX's WARP_SZ, which ptxas knows): a group width
// that NVVM sees constant makes it unroll the row loops, and ptxas 11.8 then spills many of
// the warp variants. The block's dynamic shared memory in bytes, likewise from PTX.
#ifdef GJ_EMU
GJ_DEV gj_u gj_warp_width() { return 32; }
GJ_DEV gj_u gj_dynamic_smem_bytes() { return ::gjemu::dynamic_smem_bytes(); }
#else
GJ_DEV gj_u gj_warp_width() {
  gj_u w;
  asm("mov.u32 %0, WARP_SZ;" : "=r"(w));
  return w;
}
GJ_DEV gj_u gj_dynamic_smem_bytes() {
  gj_u n;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
  return n;
}
#endif
struct GjWarp {
  static const bool kWarp = true;
  static GJ_DEV gj_ll t() { return threadIdx.x & 31; }
  static GJ_DEV gj_ll nt() { return gj_warp_width(); }
  static GJ_DEV gj_u tu() { return threadIdx.x & 31; }
  static GJ_DEV gj_u ntu() { return gj_warp_width(); }
  static GJ_DEV gj_ll row0() { return (gj_ll)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); }
  static GJ_DEV gj_ll rowstep() { return (gj_ll)gridDim.x * (blockDim.x >> 5); }
  static GJ_DEV double* region(double* smem) {
    return smem + (threadIdx.x >> 5) * (gj_dynamic_smem_bytes() / 8 / (blockDim.x >> 5));
  }
};

// Pairwise tree sum of red[0..kp) (kp a power of two), identical for every block size.
// Ends with every thread holding the result and red free for reuse.
template <typename Grp>
GJ_DEV double gj_tree_sum(double* red, gj_ll kp) {
  const gj_ll t = Grp::t(), nt = Grp::nt();
  GJ_SYNC();
  for (gj_ll h = kp >> 1; h > 0; h >>= 1) {
    for (gj_ll k = t; k < h; k += nt) red[k] += red[k + h];
    GJ_SYNC();
  }
  double r = red[0];
  GJ_SYNC();
  return r;
}

// ζ = softmax(s·l) with the maximum subtracted, into z[0..K). A NaN logit is never the maximum
// but makes the sum NaN; +Inf, or a row of −Inf, makes the row NaN; −Inf beside finite logits
// gives ζ = 0. Ends synchronised.
template <typename Grp, typename T>
GJ_DEV void gj_softmax_gate(const T* l, gj_ll K, double s, double* z, double* red, gj_ll kp) {
  const gj_ll t = Grp::t(), nt = Grp::nt();
  for (gj_ll k = t; k < kp; k += nt) red[k] = k < K ? (double)l[k] : gj_neg_inf();
  GJ_SYNC();
  for (gj_ll h = kp >> 1; h > 0; h >>= 1) {
    for (gj_ll k = t; k < h; k += nt) {
      double o = red[k + h];
      if (o > red[k]) red[k] = o;
    }
    GJ_SYNC();
  }
  const double mx = red[0];
  GJ_SYNC();
  for (gj_ll k = t; k < kp; k += nt) {
    double x = 0.0;
    if (k < K) {
      x = exp(s * ((double)l[k] - mx));
      z[k] = x;
    }
    red[k] = x;
  }
  const double r = 1.0 / gj_tree_sum<Grp>(red, kp);
  for (gj_ll k = t; k < K; k += nt) z[k] *= r;
  GJ_SYNC();
}

// Σ_k z_k·v_k over a tree (v a length-K row of T). Ends synchronised.
template <typename Grp, typename T>
GJ_DEV double gj_gate_mean(const T* v, const double* z, gj_ll K, double* red, gj_ll kp) {
  for (gj_ll k = Grp::t(); k < kp; k += Grp::nt()) red[k] = k < K ? z[k] * (double)v[k] : 0.0;
  return gj_tree_sum<Grp>(red, kp);
}

// Σ_k z_k D[k][c] summed in k order: the gate mean of column c of one row D [K,P].
template <typename T>
GJ_DEV double gj_gate_dot(const double* z, const T* D, gj_ll c, gj_ll K, gj_ll P) {
  double m = 0.0;
  for (gj_ll k = 0; k < K; ++k) m += z[k] * (double)D[k * P + c];
  return m;
}

// The centred tile e[a][c] = D[a][c0+c] − m_c for c < cw, m_c = Σ_k ζ_k D[k][c0+c] summed in k
// order; m_c is also stored in m[c] when m is not null. D is one row [K,P]. No trailing sync.
template <typename Grp, typename T>
GJ_DEV void gj_tile_e(const T* D, gj_ll K, gj_ll P, gj_ll c0, gj_ll cw, gj_ll st, const double* z,
                      double* e, double* m) {
  for (gj_ll c = Grp::t(); c < cw; c += Grp::nt()) {
    const double mc = gj_gate_dot(z, D, c0 + c, K, P);
    if (m) m[c] = mc;
    for (gj_ll a = 0; a < K; ++a) e[a * st + c] = (double)D[a * P + c0 + c] - mc;
  }
}

// GJ_TILE_EACH(R, a, c) { … }: the block's threads over the R×cw elements of a tile (R rows of
// cw columns), flattened so that neighbouring threads take neighbouring columns; a is the
// row and c the column of each element. The indices are 32-bit: launch.Plan keeps K·K·CT below
// 2^31. Needs cw, the tile's width, in scope.
#define GJ_TILE_EACH(R, a, c)                                                              \
  for (gj_u gj_j_ = Grp::tu(), gj_n_ = (gj_u)((R) * cw), gj_w_ = (gj_u)cw; gj_j_ < gj_n_; \
       gj_j_ += Grp::ntu())                                                               \
    for (gj_u a = gj_j_ / gj_w_, c = gj_j_ - a * gj_w_, gj_once_ = 1; gj_once_; gj_once_ = 0)

// GJ_STORE_EACH(R, a, c) { … }: the group's threads over the R×cw elements of a tile, as
// GJ_TILE_EACH but without a division per element, for the loops that store a K×cw tile of an
// output: the group is rows of W = min(cw, nt) lanes (the nt mod W threads left over idle), a
// row takes the tile rows a = r, r + nt/W, …, a lane the columns c = l, l + W, … of each, so
// neighbouring lanes still store neighbouring columns. 32-bit like GJ_TILE_EACH. Needs cw and
// nt in scope.
#define GJ_STORE_EACH(R, a, c)                                                              \
  for (gj_u gj_w_ = (gj_u)gj_min(cw, nt), gj_r_ = Grp::tu() / gj_w_,                         \
            gj_l_ = Grp::tu() - gj_r_ * gj_w_, gj_R_ = (gj_u)nt / gj_w_, gj_n_ = (gj_u)(R),   \
            a = gj_r_ < gj_R_ ? gj_r_ : gj_n_;                                               \
       a < gj_n_; a += gj_R_)                                                                \
    for (gj_u c = gj_l_, gj_cw_ = (gj_u)cw; c < gj_cw_; c += gj_w_)

// GJ_SECOND_EACH(a, b, c, o) { … }: the block's threads over the K·K·cw elements (a, b, c) of a
// second-channel tile without a division per element. The block is R rows of W = min(cw, nt)
// lanes (R = nt / W; the nt − R·W threads left over idle): lane l of row r takes the blocks
// ab = r, r + R, … of the tile and, in each, the columns c = l, l + W, …; neighbouring lanes
// are neighbouring columns. (a, b) advance by carries, c by W; o is the element's offset
// (a·K + b)·P + c from the tile's first column, 64-bit (K·K·P may pass 2^31), the counters
// 32-bit (launch.Plan keeps K·K·CT below 2^31). Needs K, P, cw and nt in scope.
#define GJ_SECOND_EACH(a, b, c, o)                                                              \
  for (gj_u gj_w_ = (gj_u)gj_min(cw, nt), gj_r_ = Grp::tu() / gj_w_,                         \
            gj_l_ = Grp::tu() - gj_r_ * gj_w_, gj_R_ = (gj_u)nt / gj_w_, gj_k_ = (gj_u)K,  \
            gj_da_ = gj_R_ / gj_k_, gj_db_ = gj_R_ - gj_da_ * gj_k_, a = gj_r_ / gj_k_,          \
            b = gj_r_ - a * gj_k_, gj_once_ = gj_r_ < gj_R_;                                    \
       gj_once_ && a < gj_k_; b += gj_db_, a += gj_da_ + (b >= gj_k_), b -= b >= gj_k_ ? gj_k_ : 0) \
    for (gj_ll gj_b_ = ((gj_ll)a * K + b) * P, gj_o1_ = 1; gj_o1_; gj_o1_ = 0)                    \
      for (gj_u c = gj_l_, gj_cw_ = (gj_u)cw; c < gj_cw_; c += gj_w_)                            \
        for (gj_ll o = gj_b_ + c, gj_o2_ = 1; gj_o2_; gj_o2_ = 0)

// dst[a][c] = X[a*stride + c0 + c] for a < K, c < cw (a tile of a [K, ·] array). No sync.
template <typename Grp, typename T>
GJ_DEV void gj_tile_copy(const T* X, gj_ll K, gj_ll stride, gj_ll c0, gj_ll cw, gj_ll st, double* dst) {
  GJ_TILE_EACH(K, a, c) {
    dst[a * st + c] = (double)X[a * stride + c0 + c];
  }
}

// The value-channel VJP of one tile, given the K×cw tile X (stride st) that the caller is
// filling: gt_c = Gv[c0+c], then, after a sync, dD[k][c] = z_k gt_c and acc[a] += Σ_c gt_c X[a][c].
// Gv and dD are one row ([P] and [K,P]). Ends synchronised.
template <typename Grp, typename T>
GJ_DEV void gj_value_vjp_tile(const T* Gv, const double* z, const double* X, double* gt, double* acc,
                              T* dD, gj_ll K, gj_ll P, gj_ll c0, gj_ll cw, gj_ll st) {
  const gj_ll t = Grp::t(), nt = Grp::nt();
  for (gj_ll c = t; c < cw; c += nt) gt[c] = (double)Gv[c0 + c];
  GJ_SYNC();
  GJ_STORE_EACH(K, k, c) {
    dD[k * P + c0 + c] = (T)(z[k] * gt[c]);
  }
  for (gj_ll a = t; a < K; a += nt) {
    double x = acc[a];
    for (gj_ll c = 0; c < cw; ++c) x += gt[c] * X[a * st + c];
    acc[a] = x;
  }
  GJ_SYNC();
}

// Ut[a][c] = scale · Σ_b (M_ab + M_ba) f_b X[b][c] for a < K, c < cw (X and Ut tiles of stride st,
// M one row [K,K]): the first-channel upstream of a Gauss-Newton VJP, for H[a][b] =
// Σ_c f_a X[a][c] f_b X[b][c]. No sync.
template <typename Grp, typename T>
GJ_DEV void gj_gn_upstream(const T* M, const double* f, const double* X, double* Ut, gj_ll K, gj_ll cw,
                           gj_ll st, double scale) {
  GJ_TILE_EACH(K, a, c) {
    double x = 0.0;
    for (gj_ll b = 0; b < K; ++b) x += ((double)M[a * K + b] + (double)M[b * K + a]) * f[b] * X[b * st + c];
    Ut[a * st + c] = scale * x;
  }
}

#define GJ_ROWS for (gj_ll row = Grp::row0(); row < N; row += Grp::rowstep())
#define GJ_TILES for (gj_ll c0 = 0, cw = gj_min(CT, P); c0 < P; c0 += CT, cw = gj_min(CT, P - c0))
#define GJ_JET_PROLOGUE                                     \
  GJ_SMEM_DECL;                                             \
  const gj_ll N = A.i0, K = A.i1, P = A.i2, CT = A.tile;   \
  const gj_ll st = gj_stride(CT), kp = gj_pow2(K);          \
  const gj_ll t = Grp::t(), nt = Grp::nt();             \
  (void)st; (void)kp; (void)t; (void)nt;                    \
  double* sp = Grp::region(gj_smem);

// Gauss-Newton slab: out[a][b] = f_a f_b Σ_c X[a][c] X[b][c], X tiles produced by load(c0, cw).
// Each thread owns one (a,b) per chunk of blockDim slab entries and sums over c in order, so
// out[a][b] and out[b][a] are the same sum (bitwise symmetric). With one tile the tile is built
// once per row, otherwise once per chunk.
#define GJ_GN_LOOP(LOAD, FA, OUTROW)                                             \
  {                                                                              \
    const gj_ll kk2 = K * K;                                                     \
    const bool one = CT >= P;                                                    \
    for (gj_ll base = 0; base < kk2; base += nt) {                               \
      const gj_ll j = base + t;                                                  \
      const gj_ll a = j / K, b = j - (j / K) * K;                                \
      double acc = 0.0;                                                          \
      GJ_TILES {                                                                 \
        if (!one || base == 0) {                                                 \
          GJ_SYNC();                                                       \
          LOAD;                                                                  \
          GJ_SYNC();                                                       \
        }                                                                        \
        if (j < kk2) {                                                           \
          const double* xa = X + a * st;                                         \
          const double* xb = X + b * st;                                         \
          for (gj_ll c = 0; c < cw; ++c) acc += xa[c] * xb[c];                   \
        }                                                                        \
      }                                                                          \
      if (j < kk2) OUTROW[j] = (T)(FA(a) * FA(b) * acc);                          \
    }                                                                            \
    GJ_SYNC();                                                             \
  }

// Shared skeleton of the Gauss-Newton kernels (softmax and logistic gate): per row GATE (the
// gate and its factors), then GJ_GN_LOOP over the tiles X that LOAD fills from the row Dr.
#define GJ_GN_ROWS(GATE, LOAD, FA)              \
  double* X = GJ_TAKE(sp, K * st);              \
  T* G = (T*)A.out[0];                          \
  GJ_ROWS {                                     \
    GATE;                                       \
    const T* Dr = D + row * K * P;              \
    T* Gr = G + row * K * K;                    \
    GJ_GN_LOOP(LOAD, FA, Gr)                    \
  }

// Shared skeleton of the value-channel VJPs (softmax and logistic gate): per row GATE (the gate
// z), per tile the K×cw tile X that LOAD fills from the row Dr, then gj_value_vjp_tile; at the
// end of the row dl_a = DLFAC · Σ_c G_c X[a][c] (DLFAC an expression in a).
#define GJ_VALUE_VJP_ROWS(GATE, LOAD, DLFAC)                                    \
  double* X = GJ_TAKE(sp, K * st);                                              \
  double* gt = GJ_TAKE(sp, CT);                                                 \
  double* acc = GJ_TAKE(sp, K);                                                 \
  const T* Gv = (const T*)A.in[2];                                              \
  T* dL = (T*)A.out[0];                                                         \
  T* dD = (T*)A.out[1];                                                         \
  GJ_ROWS {                                                                     \
    GATE;                                                                       \
    for (gj_ll a = t; a < K; a += nt) acc[a] = 0.0;                             \
    const T* Dr = D + row * K * P;                                              \
    const T* Gr = Gv + row * P;                                                 \
    T* dDr = dD + row * K * P;                                                  \
    GJ_TILES {                                                                  \
      LOAD;                                                                     \
      gj_value_vjp_tile<Grp>(Gr, z, X, gt, acc, dDr, K, P, c0, cw, st);              \
    }                                                                           \
    for (gj_ll a = t; a < K; a += nt) dL[row * K + a] = (T)((DLFAC) * acc[a]);  \
    GJ_SYNC();                                                            \
  }

// ---------------------------------------------------------------- softmax-gate row jets
#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_SOFTMAX_JET)

// The start of every softmax-gate kernel: the gate ζ (z) and the tree scratch (red) are carved
// first; L the logits, D the decoded values, s the inverse temperature.
#define GJ_SOFTMAX_PROLOGUE              \
  GJ_JET_PROLOGUE                        \
  double* z = GJ_TAKE(sp, K);            \
  double* red = GJ_TAKE(sp, kp);         \
  const T* L = (const T*)A.in[0];        \
  const T* D = (const T*)A.in[1];        \
  const double s = A.s;                  \
  (void)s;

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_value_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  T* V = (T*)A.out[0];
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    const T* Dr = D + row * K * P;
    for (gj_ll c = t; c < P; c += nt) V[row * P + c] = (T)gj_gate_dot(z, Dr, c, K, P);
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_first_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  double* m = GJ_TAKE(sp, CT);
  T* F = (T*)A.out[0];
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    const T* Dr = D + row * K * P;
    T* Fr = F + row * K * P;
    GJ_TILES {
      for (gj_ll c = t; c < cw; c += nt) m[c] = gj_gate_dot(z, Dr, c0 + c, K, P);
      GJ_SYNC();
      GJ_TILE_EACH(K, a, c) {
        gj_ll o = a * P + c0 + c;
        Fr[o] = (T)(s * z[a] * ((double)Dr[o] - m[c]));
      }
      GJ_SYNC();
    }
  }
}

// The second channel's entry S[a][b][c]/s² (docs/math.md), given ea = e[a][c] and eb = e[b][c].
GJ_DEV double gj_second_entry(const double* z, gj_u a, gj_u b, double ea, double eb) {
  double v = -z[a] * z[b] * (ea + eb);
  if (a == b) v += z[a] * ea;
  return v;
}

// The second channel in float32, as softmaxjet.Second computes a float32 row: the gate, m and
// e in double, e rounded to float once, each block's coefficient rounded to float, then
// coef·(e[a][c] + e[b][c]) in float. The coefficients are the float products −(sζ_a)(sζ_b)
// off the diagonal (sζ_k rounded to float, a few float ulps from softmaxjet's rounded double
// −s²ζ_aζ_b) and s²ζ_a(1 − 2ζ_a)/2 rounded to float on it, kept in red, which the gate leaves
// free: 2K floats fit in its pow2(K) doubles. The e tile is floats in the K·st doubles carved
// for it, and the float after its K·st floats is the row's flag: set when the row fails
// softmaxjet's float32 range checks (a coefficient neither 0 nor within [2⁻⁹⁹, 2¹⁰⁰] in
// magnitude, s² > 2¹⁰⁰, a NaN gate, a finite |e| > 2¹⁰⁰). Then the row's tiles from there on
// are computed in double from D, as the double kernel does, and rounded once (rows that
// softmaxjet computes in double too; e from D again, rare enough not to keep it).
#define GJ_2P100 1267650600228229401496703205376.0        // 2¹⁰⁰ (NVRTC 11.8 has no hex floats)
#define GJ_2M98 (1.0 / 316912650057057350374175801344.0)  // 2⁻⁹⁸, exact
#define GJ_2M99 (1.0 / 633825300114114700748351602688.0)  // 2⁻⁹⁹, exact
template <typename Grp>
GJ_DEV void jet_second_f32_body(const GjArgs& A) {
  typedef float T;
  GJ_SOFTMAX_PROLOGUE
  double* e = GJ_TAKE(sp, K * st);
  float* ef = (float*)e;
  float* flag = ef + K * st;
  float* sz = (float*)red;
  float* dg = sz + K;
  T* S = (T*)A.out[0];
  const double s2 = s * s;
  const gj_u su = (gj_u)st;
  GJ_ROWS {
    if (t == 0) *flag = 0.0f;  // the gate's first barrier orders it before any setting
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    for (gj_ll k = t; k < K; k += nt) {
      const double za = z[k], f = s2 * za * (1.0 - 2.0 * za) / 2.0, fa = fabs(f);
      sz[k] = (float)(s * za);
      dg[k] = (float)f;
      const bool off = K > 1 && (s2 > GJ_2P100 || (za > 0.0 && s2 * za * za < GJ_2M98));
      if ((fa != 0.0 && !(fa >= GJ_2M99 && fa <= GJ_2P100)) || !(za >= 0.0) || off) *flag = 1.0f;
    }
    const T* Dr = D + row * K * P;
    T* Sr = S + row * K * K * P;
    GJ_TILES {
      for (gj_ll c = t; c < cw; c += nt) {
        const double mc = gj_gate_dot(z, Dr, c0 + c, K, P);
#ifndef GJ_EMU
#pragma unroll 1
#endif
        for (gj_ll a = 0; a < K; ++a) {
          const double x = (double)Dr[a * P + c0 + c] - mc;
          ef[a * st + c] = (float)x;
          if ((x > GJ_2P100 || x < -GJ_2P100) && x - x == 0.0) *flag = 1.0f;
        }
      }
      GJ_SYNC();
      T* So = Sr + c0;
      if (*flag == 0.0f) {
        GJ_SECOND_EACH(a, b, c, o) {
          const float f = a == b ? dg[a] : -(sz[a] * sz[b]);
          So[o] = f * (ef[a * su + c] + ef[b * su + c]);
        }
      } else {
        GJ_SECOND_EACH(a, b, c, o) {
          double mc = 0.0;  // gj_gate_dot, rolled: unrolled, ptxas 11.8 spills this kernel
#ifndef GJ_EMU
#pragma unroll 1
#endif
          for (gj_ll k = 0; k < K; ++k) mc += z[k] * (double)Dr[k * P + c0 + c];
          const double ea = (double)Dr[a * P + c0 + c] - mc, eb = (double)Dr[b * P + c0 + c] - mc;
          So[o] = (T)(s2 * gj_second_entry(z, a, b, ea, eb));
        }
      }
      GJ_SYNC();
    }
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_second_body(const GjArgs& A) {
  if (sizeof(T) == 4) {
    jet_second_f32_body<Grp>(A);
    return;
  }
  GJ_SOFTMAX_PROLOGUE
  double* e = GJ_TAKE(sp, K * st);
  T* S = (T*)A.out[0];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    const T* Dr = D + row * K * P;
    T* Sr = S + row * K * K * P;
    GJ_TILES {
      gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, e, (double*)0);
      GJ_SYNC();
      T* So = Sr + c0;
      const gj_u su = (gj_u)st;
      GJ_SECOND_EACH(a, b, c, o) {
        So[o] = (T)(s2 * gj_second_entry(z, a, b, e[a * su + c], e[b * su + c]));
      }
      GJ_SYNC();
    }
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_hvp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  double* u = GJ_TAKE(sp, K);
  double* m = GJ_TAKE(sp, CT);
  double* w = GJ_TAKE(sp, CT);
  const T* V = (const T*)A.in[2];
  T* H = (T*)A.out[0];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    const T* Vr = V + row * K;
    const double vbar = gj_gate_mean<Grp>(Vr, z, K, red, kp);
    for (gj_ll b = t; b < K; b += nt) u[b] = (double)Vr[b] - vbar;
    GJ_SYNC();
    const T* Dr = D + row * K * P;
    T* Hr = H + row * K * P;
    GJ_TILES {
      for (gj_ll c = t; c < cw; c += nt) {
        const double mc = gj_gate_dot(z, Dr, c0 + c, K, P);
        double wc = 0.0;
        // Not unrolled: unrolled, ptxas 11.8 spills this kernel's f32 twin for sm_90.
#ifndef GJ_EMU
#pragma unroll 1
#endif
        for (gj_ll b = 0; b < K; ++b) wc += z[b] * u[b] * ((double)Dr[b * P + c0 + c] - mc);
        m[c] = mc;
        w[c] = wc;
      }
      GJ_SYNC();
      GJ_STORE_EACH(K, a, c) {
        gj_ll o = a * P + c0 + c;
        Hr[o] = (T)(s2 * z[a] * (((double)Dr[o] - m[c]) * u[a] - w[c]));
      }
      GJ_SYNC();
    }
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_gauss_newton_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
#define GJ_FA(i) (s * z[i])
  GJ_GN_ROWS(gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp),
             gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, X, (double*)0), GJ_FA)
#undef GJ_FA
}

// The centred VJP passes of one tile, given the K×cw tiles e and X and the column means m
// (stride st, visible): dD[k][c] = f ζ_k (X[k][c] − m_c) and acc[b] += Σ_c e[b][c] (X[b][c] − m_c),
// less sub[b][c] per term where SUB. No sync.
template <typename Grp, bool SUB, typename T>
GJ_DEV void gj_centred_vjp(const double* z, const double* e, const double* X, const double* m,
                           const double* sub, double* acc, T* dDr, gj_ll K, gj_ll P, gj_ll c0,
                           gj_ll cw, gj_ll st, double f) {
  const gj_ll t = Grp::t(), nt = Grp::nt();
  GJ_STORE_EACH(K, k, c) {
    dDr[k * P + c0 + c] = (T)(f * z[k] * (X[k * st + c] - m[c]));
  }
  for (gj_ll b = t; b < K; b += nt) {
    double x = acc[b];
    for (gj_ll c = 0; c < cw; ++c) {
      if (SUB) x += e[b * st + c] * (X[b * st + c] - m[c]) - sub[b * st + c];
      else x += e[b * st + c] * (X[b * st + c] - m[c]);
    }
    acc[b] = x;
  }
}

// The first-channel VJP of one tile, given e and the upstream tile Gt (both K×cw, stride st):
// γ_c = Σ_a ζ_a Gt[a][c], ρ_c = Σ_a ζ_a Gt[a][c] e[a][c]; dD[k][c] = s ζ_k (Gt[k][c] − γ_c);
// acc[b] += Σ_c e[b][c] (Gt[b][c] − γ_c); *rsum += Σ_c ρ_c. Starts after a sync that made e and
// Gt visible; ends synchronised.
template <typename Grp, typename T>
GJ_DEV void gj_first_vjp_tile(const double* z, const double* e, const double* Gt, double* gam,
                              double* rho, double* acc, double* rsum, T* dDr, gj_ll K, gj_ll P,
                              gj_ll c0, gj_ll cw, gj_ll st, double s) {
  const gj_ll t = Grp::t(), nt = Grp::nt();
  for (gj_ll c = t; c < cw; c += nt) {
    double g = 0.0, r = 0.0;
    for (gj_ll a = 0; a < K; ++a) {
      double x = z[a] * Gt[a * st + c];
      g += x;
      r += x * e[a * st + c];
    }
    gam[c] = g;
    rho[c] = r;
  }
  GJ_SYNC();
  gj_centred_vjp<Grp, false>(z, e, Gt, gam, (const double*)0, acc, dDr, K, P, c0, cw, st, s);
  if (t == 0) {
    double x = *rsum;
    for (gj_ll c = 0; c < cw; ++c) x += rho[c];
    *rsum = x;
  }
  GJ_SYNC();
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_value_vjp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  GJ_VALUE_VJP_ROWS(gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp),
                    gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, X, (double*)0), s * z[a])
}

// Shared skeleton of the softmax-gate VJPs that end in the first-channel VJP: per row the gate,
// per tile e and the first-channel upstream tile Ut (UPSTREAM fills it, K×cw with stride st, and
// ends synchronised), then gj_first_vjp_tile; dl_b = s² ζ_b (acc_b − Σ_c ρ_c).
#define GJ_FIRST_VJP_ROWS(UPSTREAM)                                                          \
  double* e = GJ_TAKE(sp, K * st);                                                           \
  double* Ut = GJ_TAKE(sp, K * st);                                                          \
  double* gam = GJ_TAKE(sp, CT);                                                             \
  double* rho = GJ_TAKE(sp, CT);                                                             \
  double* acc = GJ_TAKE(sp, K);                                                              \
  double* rsum = GJ_TAKE(sp, 1);                                                             \
  T* dL = (T*)A.out[0];                                                                      \
  T* dD = (T*)A.out[1];                                                                      \
  GJ_ROWS {                                                                                  \
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);                                          \
    for (gj_ll a = t; a < K; a += nt) acc[a] = 0.0;                                          \
    if (t == 0) *rsum = 0.0;                                                                 \
    const T* Dr = D + row * K * P;                                                           \
    GJ_TILES {                                                                               \
      gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, e, (double*)0);                                     \
      UPSTREAM;                                                                              \
      gj_first_vjp_tile<Grp>(z, e, Ut, gam, rho, acc, rsum, dD + row * K * P, K, P, c0, cw, st, s); \
    }                                                                                        \
    const double r = *rsum;                                                                  \
    for (gj_ll b = t; b < K; b += nt) dL[row * K + b] = (T)(s * s * z[b] * (acc[b] - r));    \
    GJ_SYNC();                                                                         \
  }

template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_first_vjp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  const T* G = (const T*)A.in[2];
  GJ_FIRST_VJP_ROWS(gj_tile_copy<Grp>(G + row * K * P, K, P, c0, cw, st, Ut); GJ_SYNC())
}

// Second-channel VJP. With H_abc = G_abc + G_bac, per tile and column:
//   q[a][c] = G_aac − Σ_b H_abc ζ_b,  t[a][c] = Σ_b H_abc ζ_b e[b][c],  Q_c = Σ_a ζ_a q[a][c];
//   dD[k][c] = s² ζ_k (q[k][c] − Q_c);  acc_k = Σ_c e[k][c](q[k][c] − Q_c) − t[k][c];
//   dl_j = s³ ζ_j (acc_j − Σ_k ζ_k acc_k).
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_second_vjp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  double* e = GJ_TAKE(sp, K * st);
  double* q = GJ_TAKE(sp, K * st);
  double* tt = GJ_TAKE(sp, K * st);
  double* Qc = GJ_TAKE(sp, CT);
  double* acc = GJ_TAKE(sp, K);
  const T* G = (const T*)A.in[2];
  T* dL = (T*)A.out[0];
  T* dD = (T*)A.out[1];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    for (gj_ll a = t; a < K; a += nt) acc[a] = 0.0;
    const T* Dr = D + row * K * P;
    const T* Gr = G + row * K * K * P;
    T* dDr = dD + row * K * P;
    GJ_TILES {
      gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, e, (double*)0);
      GJ_SYNC();
      GJ_TILE_EACH(K, a, c) {
        double r = 0.0, tv = 0.0;
        for (gj_ll b = 0; b < K; ++b) {
          double h = (double)Gr[(a * K + b) * P + c0 + c] + (double)Gr[(b * K + a) * P + c0 + c];
          double hz = h * z[b];
          r += hz;
          tv += hz * e[b * st + c];
        }
        q[a * st + c] = (double)Gr[((gj_ll)a * K + a) * P + c0 + c] - r;
        tt[a * st + c] = tv;
      }
      GJ_SYNC();
      for (gj_ll c = t; c < cw; c += nt) {
        double x = 0.0;
        for (gj_ll a = 0; a < K; ++a) x += z[a] * q[a * st + c];
        Qc[c] = x;
      }
      GJ_SYNC();
      gj_centred_vjp<Grp, true>(z, e, q, Qc, tt, acc, dDr, K, P, c0, cw, st, s2);
      GJ_SYNC();
    }
    for (gj_ll k = t; k < kp; k += nt) red[k] = k < K ? z[k] * acc[k] : 0.0;
    const double gbar = gj_tree_sum<Grp>(red, kp);
    for (gj_ll j = t; j < K; j += nt) dL[row * K + j] = (T)(s2 * s * z[j] * (acc[j] - gbar));
    GJ_SYNC();
  }
}

// HVP VJP. u_a = v_a − v̄; per column: w_c = Σ_b ζ_b u_b e[b][c], γ_c = Σ_a ζ_a G[a][c],
// ρ_c = Σ_a ζ_a G[a][c] e[a][c], γ'_c = Σ_a ζ_a u_a G[a][c], ρ'_c = Σ_a ζ_a u_a G[a][c] e[a][c].
//   dD[k][c] = s² ζ_k (u_k (G[k][c] − γ_c) − γ'_c)
//   A_b = Σ_c e[b][c](G[b][c] − γ_c) − Σ_c ρ_c;   dV_b = s² ζ_b A_b
//   dl_b = s³ ζ_b (u_b A_b − Σ_c [w_c (G[b][c] − γ_c) + e[b][c] γ'_c] − Σ_c (ρ'_c − w_c γ_c))
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_hvp_vjp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  double* u = GJ_TAKE(sp, K);
  double* e = GJ_TAKE(sp, K * st);
  double* Gt = GJ_TAKE(sp, K * st);
  double* wc = GJ_TAKE(sp, CT);
  double* gam = GJ_TAKE(sp, CT);
  double* rho = GJ_TAKE(sp, CT);
  double* gamp = GJ_TAKE(sp, CT);
  double* rhop = GJ_TAKE(sp, CT);
  double* accA = GJ_TAKE(sp, K);
  double* accB = GJ_TAKE(sp, K);
  double* sums = GJ_TAKE(sp, 2);
  const T* V = (const T*)A.in[2];
  const T* G = (const T*)A.in[3];
  T* dL = (T*)A.out[0];
  T* dD = (T*)A.out[1];
  T* dV = (T*)A.out[2];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    const T* Vr = V + row * K;
    const double vbar = gj_gate_mean<Grp>(Vr, z, K, red, kp);
    for (gj_ll b = t; b < K; b += nt) {
      u[b] = (double)Vr[b] - vbar;
      accA[b] = 0.0;
      accB[b] = 0.0;
    }
    if (t == 0) sums[0] = sums[1] = 0.0;
    GJ_SYNC();
    const T* Dr = D + row * K * P;
    const T* Gr = G + row * K * P;
    T* dDr = dD + row * K * P;
    GJ_TILES {
      gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, e, (double*)0);
      gj_tile_copy<Grp>(Gr, K, P, c0, cw, st, Gt);
      GJ_SYNC();
      for (gj_ll c = t; c < cw; c += nt) {
        double w = 0.0, g = 0.0, r = 0.0, gp = 0.0, rp = 0.0;
        for (gj_ll a = 0; a < K; ++a) {
          double ea = e[a * st + c], zg = z[a] * Gt[a * st + c], zu = z[a] * u[a];
          w += zu * ea;
          g += zg;
          r += zg * ea;
          gp += zg * u[a];
          rp += zg * u[a] * ea;
        }
        wc[c] = w;
        gam[c] = g;
        rho[c] = r;
        gamp[c] = gp;
        rhop[c] = rp;
      }
      GJ_SYNC();
      GJ_STORE_EACH(K, k, c) {
        dDr[k * P + c0 + c] = (T)(s2 * z[k] * (u[k] * (Gt[k * st + c] - gam[c]) - gamp[c]));
      }
      for (gj_ll b = t; b < K; b += nt) {
        double xa = accA[b], xb = accB[b];
        for (gj_ll c = 0; c < cw; ++c) {
          double gm = Gt[b * st + c] - gam[c];
          xa += e[b * st + c] * gm;
          xb += wc[c] * gm + e[b * st + c] * gamp[c];
        }
        accA[b] = xa;
        accB[b] = xb;
      }
      if (t == 0) {
        double x0 = sums[0], x1 = sums[1];
        for (gj_ll c = 0; c < cw; ++c) {
          x0 += rho[c];
          x1 += rhop[c] - wc[c] * gam[c];
        }
        sums[0] = x0;
        sums[1] = x1;
      }
      GJ_SYNC();
    }
    const double rs = sums[0], rps = sums[1];
    for (gj_ll b = t; b < K; b += nt) {
      double a = accA[b] - rs;
      dV[row * K + b] = (T)(s2 * z[b] * a);
      dL[row * K + b] = (T)(s2 * s * z[b] * (u[b] * a - accB[b] - rps));
    }
    GJ_SYNC();
  }
}

// Gauss-Newton VJP: upstream M [K,K] on H[a][b] = Σ_c first[a][c] first[b][c] gives the
// first-channel upstream Gf[a][c] = Σ_b (M_ab + M_ba) first[b][c] = s Σ_b (M_ab + M_ba) ζ_b e[b][c],
// then the first-channel VJP.
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_gauss_newton_vjp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  const T* M = (const T*)A.in[2];
  GJ_FIRST_VJP_ROWS(GJ_SYNC(); gj_gn_upstream<Grp>(M + row * K * K, z, e, Ut, K, cw, st, s); GJ_SYNC())
}

#endif  // softmax-gate row jets

// ---------------------------------------------------------------- logistic-gate row jets
#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_LOGISTIC_JET)

// Per atom: z = σ(x), d1 = α σ'(x), d2 = α² σ''(x), d3 = α³ σ'''(x) with x = α l + β, from
// q = 1 − σ computed without cancellation. Ends synchronised.
template <typename Grp, typename T>
GJ_DEV void gj_logistic_gate(const T* l, gj_ll K, const double* ab, double* z, double* d1, double* d2,
                             double* d3) {
  for (gj_ll k = Grp::t(); k < K; k += Grp::nt()) {
    const double al = ab[k], x = al * (double)l[k] + ab[K + k];
    double s0, q;
    if (x >= 0) {
      double ex = exp(-x);
      s0 = 1.0 / (1.0 + ex);
      q = ex / (1.0 + ex);
    } else {
      double ex = exp(x);
      s0 = ex / (1.0 + ex);
      q = 1.0 / (1.0 + ex);
    }
    const double s1 = s0 * q, s2 = s1 * (q - s0), s3 = s1 * (1.0 - 6.0 * s0 * q);
    z[k] = s0;
    d1[k] = al * s1;
    d2[k] = al * al * s2;
    d3[k] = al * al * al * s3;
  }
  GJ_SYNC();
}

#define GJ_LOGISTIC_PROLOGUE                 \
  GJ_JET_PROLOGUE                            \
  double* z = GJ_TAKE(sp, K);                \
  double* d1 = GJ_TAKE(sp, K);               \
  double* d2 = GJ_TAKE(sp, K);               \
  double* d3 = GJ_TAKE(sp, K);               \
  (void)z; (void)d1; (void)d2; (void)d3;     \
  const T* L = (const T*)A.in[0];            \
  const T* D = (const T*)A.in[1];
// The gate of row `row`: ζ and its three scaled derivatives into z, d1, d2, d3.
#define GJ_LOGISTIC_GATE gj_logistic_gate<Grp>(L + row * K, K, A.floats, z, d1, d2, d3)
// The start of a row: its gate and its decoded values Dr.
#define GJ_LOGISTIC_ROW \
  GJ_LOGISTIC_GATE;     \
  const T* Dr = D + row * K * P

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_value_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  T* V = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_ROW;
    for (gj_ll c = t; c < P; c += nt) V[row * P + c] = (T)gj_gate_dot(z, Dr, c, K, P);
    GJ_SYNC();
  }
}

// out[a][c] = f(a) · D[a][c] (· extra(a)) over a row, tile by tile.
#define GJ_SCALED_ROWS(OUTROW, FA)                                   \
  GJ_TILES {                                                          \
    GJ_STORE_EACH(K, a, c) {                                           \
      gj_ll o = a * P + c0 + c;                                       \
      OUTROW[o] = (T)((FA) * (double)Dr[o]);                          \
    }                                                                 \
  }

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_first_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  T* F = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_ROW;
    T* Fr = F + row * K * P;
    GJ_SCALED_ROWS(Fr, d1[a])
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_hvp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  const T* V = (const T*)A.in[2];
  T* H = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_ROW;
    const T* Vr = V + row * K;
    T* Hr = H + row * K * P;
    GJ_SCALED_ROWS(Hr, d2[a] * (double)Vr[a])
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_second_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  T* S = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_ROW;
    T* Sr = S + row * K * K * P;
    GJ_TILES {
      T* So = Sr + c0;
      const T* Do = Dr + c0;
      GJ_SECOND_EACH(a, b, c, o) {
        double v = 0.0;
        if (a == b) v = d2[a] * (double)Do[(gj_ll)a * P + c];
        So[o] = (T)v;
      }
    }
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_gauss_newton_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
#define GJ_FA(i) (d1[i])
  GJ_GN_ROWS(GJ_LOGISTIC_GATE, gj_tile_copy<Grp>(Dr, K, P, c0, cw, st, X),
             GJ_FA)
#undef GJ_FA
}

// acc[a] += Σ_c X[a][c]·Y[a][c] over a tile (thread per atom); no sync.
template <typename Grp>
GJ_DEV void gj_acc_rowdot(double* acc, const double* X, const double* Y, gj_ll K, gj_ll cw, gj_ll st) {
  for (gj_ll a = Grp::t(); a < K; a += Grp::nt()) {
    double x = acc[a];
    for (gj_ll c = 0; c < cw; ++c) x += X[a * st + c] * Y[a * st + c];
    acc[a] = x;
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_value_vjp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  GJ_VALUE_VJP_ROWS(GJ_LOGISTIC_GATE, gj_tile_copy<Grp>(Dr, K, P, c0, cw, st, X), d1[a])
}

// Shared skeleton of the diagonal logistic VJPs: per tile, Dt = D and Ut = the upstream tile
// (UPSTREAM loads it); dD[a][c] = DDFAC(a)·Ut[a][c]; acc[a] = Σ_c Ut[a][c] D[a][c]; then FINAL.
#define GJ_LOGISTIC_DIAG_VJP(UPSTREAM, DDFAC, FINAL)                          \
  double* Dt = GJ_TAKE(sp, K * st);                                           \
  double* Ut = GJ_TAKE(sp, K * st);                                           \
  double* acc = GJ_TAKE(sp, K);                                               \
  T* dL = (T*)A.out[0];                                                       \
  T* dD = (T*)A.out[1];                                                       \
  GJ_ROWS {                                                                   \
    GJ_LOGISTIC_GATE;                                                         \
    for (gj_ll a = t; a < K; a += nt) acc[a] = 0.0;                           \
    const T* Dr = D + row * K * P;                                            \
    T* dDr = dD + row * K * P;                                                \
    GJ_TILES {                                                                \
      gj_tile_copy<Grp>(Dr, K, P, c0, cw, st, Dt);                                 \
      UPSTREAM;                                                               \
      GJ_SYNC();                                                        \
      GJ_TILE_EACH(K, a, c) {                                                  \
        dDr[a * P + c0 + c] = (T)((DDFAC) * Ut[a * st + c]);                  \
      }                                                                       \
      gj_acc_rowdot<Grp>(acc, Ut, Dt, K, cw, st);                                  \
      GJ_SYNC();                                                        \
    }                                                                         \
    for (gj_ll a = t; a < K; a += nt) { FINAL; }                              \
    GJ_SYNC();                                                          \
  }

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_first_vjp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  const T* G = (const T*)A.in[2];
  GJ_LOGISTIC_DIAG_VJP(gj_tile_copy<Grp>(G + row * K * P, K, P, c0, cw, st, Ut), d1[a],
                       dL[row * K + a] = (T)(d2[a] * acc[a]))
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_second_vjp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  const T* G = (const T*)A.in[2];
  // The diagonal G[a][a][c] is a [K, ·] array with row stride (K+1)·P.
  GJ_LOGISTIC_DIAG_VJP(gj_tile_copy<Grp>(G + row * K * K * P, K, (K + 1) * P, c0, cw, st, Ut), d2[a],
                       dL[row * K + a] = (T)(d3[a] * acc[a]))
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_hvp_vjp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  const T* V = (const T*)A.in[2];
  const T* G = (const T*)A.in[3];
  T* dV = (T*)A.out[2];
  GJ_LOGISTIC_DIAG_VJP(gj_tile_copy<Grp>(G + row * K * P, K, P, c0, cw, st, Ut),
                       d2[a] * (double)V[row * K + a],
                       dL[row * K + a] = (T)(d3[a] * (double)V[row * K + a] * acc[a]);
                       dV[row * K + a] = (T)(d2[a] * acc[a]))
}

// Upstream M [K,K] on H[a][b] = d1_a d1_b Σ_c D[a][c] D[b][c] gives the first-channel upstream
// Gf[a][c] = Σ_b (M_ab + M_ba) d1_b D[b][c]; then the first-channel VJP.
template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_gauss_newton_vjp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  const T* M = (const T*)A.in[2];
  GJ_LOGISTIC_DIAG_VJP(GJ_SYNC(); gj_gn_upstream<Grp>(M + row * K * K, d1, Dt, Ut, K, cw, st, 1.0), d1[a],
                       dL[row * K + a] = (T)(d2[a] * acc[a]))
}

#endif  // logistic-gate row jets

// ---------------------------------------------------------------- softmax-family backward
#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_AXIS)

// The layout of the axis kernels: one block per (outer index o, slab of W = tile consecutive inner
// indices), its B = W·R threads R rows of W lanes (thread t is lane t % W of row t / W); red1 and
// red2 hold one double per thread. GJ_SLABS runs over the block's (o, slab) pairs; in one,
// GJ_SLAB_COLUMN gives the thread's inner index i, whether it has a column (live) and the offset
// of the column's first element (base; element j of the axis is at base + j·inner).
#define GJ_AXIS_PROLOGUE                                         \
  GJ_SMEM_DECL;                                                  \
  const gj_ll outer = A.i0, n = A.i1, inner = A.i2, W = A.tile;  \
  const gj_ll t = threadIdx.x, R = blockDim.x / W;               \
  const gj_ll lane = t % W, r = t / W;                           \
  double* sp = gj_smem;                                          \
  double* red1 = GJ_TAKE(sp, blockDim.x);                        \
  double* red2 = GJ_TAKE(sp, blockDim.x);                        \
  const gj_ll slabs = (inner + W - 1) / W, total = outer * slabs;
#define GJ_SLABS for (gj_ll blk = blockIdx.x; blk < total; blk += gridDim.x)
#define GJ_SLAB_COLUMN                                              \
  const gj_ll o = blk / slabs, i = (blk - o * slabs) * W + lane;    \
  const bool live = i < inner && r < R;                             \
  const gj_ll base = o * n * inner + i;

// One block per (outer index, slab of W = tile consecutive inner indices); the block's
// B = W·R threads are R rows of W lanes. Pass 1: each thread sums its strided share of the axis
// (j = r, r+R, …) in order, then a fixed tree over the R partials; pass 2 writes the outputs.
// KIND: 0 softmax, 1 log-softmax, 2 softmax grad, 3 log-softmax grad.
template <typename T, int KIND>
GJ_DEV void axis_body(const GjArgs& A) {
  GJ_AXIS_PROLOGUE
  const T* Y = (const T*)A.in[0];
  const T* DY = (const T*)A.in[1];
  const T* G = KIND >= 2 ? (const T*)A.in[2] : (const T*)0;
  T* O1 = (T*)A.out[0];
  T* O2 = KIND >= 2 ? (T*)A.out[1] : (T*)0;
  GJ_SLABS {
    GJ_SLAB_COLUMN
    double s1 = 0.0, s2 = 0.0;
    if (live) {
      for (gj_ll j = r; j < n; j += R) {
        const gj_ll x = base + j * inner;
        const double y = (double)Y[x], dy = (double)DY[x];
        if (KIND == 0) s1 += y * dy;
        if (KIND == 1) s1 += dy;
        if (KIND == 2) {
          s1 += y * dy;
          s2 += y * (double)G[x];
        }
        if (KIND == 3) {
          s1 += dy;
          s2 += (double)G[x] * exp(y);
        }
      }
    }
    red1[t] = s1;
    red2[t] = s2;
    __syncthreads();
    for (gj_ll h = R >> 1; h > 0; h >>= 1) {
      if (r < h) {
        red1[t] += red1[t + h * W];
        red2[t] += red2[t + h * W];
      }
      __syncthreads();
    }
    const double S1 = red1[lane], S2 = red2[lane];
    __syncthreads();
    if (live) {
      for (gj_ll j = r; j < n; j += R) {
        const gj_ll x = base + j * inner;
        const double y = (double)Y[x], dy = (double)DY[x];
        if (KIND == 0) O1[x] = (T)(y * (dy - S1));
        if (KIND == 1) O1[x] = (T)(dy - exp(y) * S1);
        if (KIND == 2) {
          const double g = (double)G[x];
          O1[x] = (T)(g * (dy - S1) - dy * S2);
          O2[x] = (T)(y * (g - S2));
        }
        if (KIND == 3) {
          const double g = (double)G[x];
          O1[x] = (T)(-g * exp(y) * S1);
          O2[x] = (T)(g - S2);
        }
      }
    }
  }
}

template <typename T>
GJ_DEV void softmax_backward_body(const GjArgs& A) { axis_body<T, 0>(A); }
template <typename T>
GJ_DEV void log_softmax_backward_body(const GjArgs& A) { axis_body<T, 1>(A); }
template <typename T>
GJ_DEV void softmax_backward_grad_body(const GjArgs& A) { axis_body<T, 2>(A); }
template <typename T>
GJ_DEV void log_softmax_backward_grad_body(const GjArgs& A) { axis_body<T, 3>(A); }

// Softmax-family forward, same design as axis_body: one block per (outer index, slab of W
// inner indices), R rows of W lanes. Pass 1: the max M of each column (NaN skipped), each
// thread over its strided share of the axis, then a fixed tree; pass 2: S = Σ exp(x − M)
// likewise (shifted by 0 when M = −Inf, so that an all −Inf column sums to 0 and then gives
// NaN, as package backward does); pass 3 writes y = exp(x − M)/S or (x − M) − log S.
// LOG: 0 softmax, 1 log-softmax.
template <typename T, int LOG>
GJ_DEV void axis_forward_body(const GjArgs& A) {
  GJ_AXIS_PROLOGUE
  const T* X = (const T*)A.in[0];
  T* Y = (T*)A.out[0];
  GJ_SLABS {
    GJ_SLAB_COLUMN
    double m = gj_neg_inf();
    if (live) {
      for (gj_ll j = r; j < n; j += R) {
        const double x = (double)X[base + j * inner];
        if (x > m) m = x;
      }
    }
    red1[t] = m;
    __syncthreads();
    for (gj_ll h = R >> 1; h > 0; h >>= 1) {
      if (r < h && red1[t + h * W] > red1[t]) red1[t] = red1[t + h * W];
      __syncthreads();
    }
    const double M = red1[lane];
    const double sh = M == gj_neg_inf() ? 0.0 : M;
    double s = 0.0;
    if (live) {
      for (gj_ll j = r; j < n; j += R) s += exp((double)X[base + j * inner] - sh);
    }
    red2[t] = s;
    __syncthreads();
    for (gj_ll h = R >> 1; h > 0; h >>= 1) {
      if (r < h) red2[t] += red2[t + h * W];
      __syncthreads();
    }
    const double S = red2[lane], L = log(S);
    __syncthreads();
    if (live) {
      for (gj_ll j = r; j < n; j += R) {
        const gj_ll x = base + j * inner;
        const double v = (double)X[x] - M;
        Y[x] = LOG ? (T)(v - L) : (T)(exp(v) / S);
      }
    }
  }
}

template <typename T>
GJ_DEV void softmax_forward_body(const GjArgs& A) { axis_forward_body<T, 0>(A); }
template <typename T>
GJ_DEV void log_softmax_forward_body(const GjArgs& A) { axis_forward_body<T, 1>(A); }

#endif  // softmax-family backward

// ---------------------------------------------------------------- activations
#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_ELEMENTWISE)

#define GJ_GELU_C 0.7978845608028654  // √(2/π)
#define GJ_GELU_A 0.044715
#define GJ_GELU_CUT 30.0               // beyond ±30, σ(2u) is exactly 0 or 1 in double

// σ(x) and 1 − σ(x) from exp(−|x|), without cancellation.
GJ_DEV void gj_sigmoid_pair(double x, double* s, double* q) {
  const double e = exp(-fabs(x)), r = 1.0 / (1.0 + e);
  if (x >= 0) {
    *s = r;
    *q = e * r;
  } else {
    *s = e * r;
    *q = r;
  }
}

// f(x), f'(x), f''(x) of activation ACT (0 ReLU, 1 GELU tanh form, 2 SiLU), with the limits at
// ±Inf and NaN propagating. GELU is x·σ(2u), u = √(2/π)(x + 0.044715x³).
template <int ACT>
GJ_DEV void gj_act(double x, double* f, double* d1, double* d2) {
  if (ACT == 0) {
    const bool nan = x != x;
    *f = (x > 0 || nan) ? x : 0.0;
    *d1 = nan ? x : (x > 0 ? 1.0 : 0.0);
    *d2 = nan ? x : 0.0;
  } else if (ACT == 1) {
    if (x > GJ_GELU_CUT) {
      *f = x; *d1 = 1.0; *d2 = 0.0;
      return;
    }
    if (x < -GJ_GELU_CUT) {
      *f = 0.0; *d1 = 0.0; *d2 = 0.0;
      return;
    }
    const double x2 = x * x, u = GJ_GELU_C * x * (1.0 + GJ_GELU_A * x2);
    const double up = GJ_GELU_C * (1.0 + 3.0 * GJ_GELU_A * x2), upp = 6.0 * GJ_GELU_A * GJ_GELU_C * x;
    double s, q;
    gj_sigmoid_pair(2.0 * u, &s, &q);
    const double sq = s * q, th = s - q;  // σ(2u)(1 − σ(2u)), tanh u = 2σ(2u) − 1
    *f = x * s;
    *d1 = s + 2.0 * x * up * sq;
    *d2 = 2.0 * sq * (2.0 * up + x * upp - 2.0 * x * up * up * th);
  } else {
    const double inf = __longlong_as_double((gj_ll)0x7ff0000000000000ULL);
    if (x == inf) {
      *f = x; *d1 = 1.0; *d2 = 0.0;
      return;
    }
    if (x == -inf) {
      *f = 0.0; *d1 = 0.0; *d2 = 0.0;
      return;
    }
    double s, q;
    gj_sigmoid_pair(x, &s, &q);
    *f = x * s;
    *d1 = s * (1.0 + x * q);
    *d2 = s * q * (2.0 + x * (q - s));
  }
}

// WHAT: 0 forward (y = f), 1 backward (dx = dy f'), 2 backward grad (dX = g dy f'', dDY = g f').
// ReLU keeps dy where x > 0 exactly (0 elsewhere even for non-finite dy, NaN where x is NaN).
template <typename T, int ACT, int WHAT>
GJ_DEV void act_body(const GjArgs& A) {
  const gj_ll len = A.i0;
  const T* X = (const T*)A.in[0];
  const T* DY = WHAT >= 1 ? (const T*)A.in[1] : (const T*)0;
  const T* G = WHAT == 2 ? (const T*)A.in[2] : (const T*)0;
  T* O1 = (T*)A.out[0];
  T* O2 = WHAT == 2 ? (T*)A.out[1] : (T*)0;
  const gj_ll stride = (gj_ll)gridDim.x * blockDim.x;
  for (gj_ll i = (gj_ll)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
    const double x = (double)X[i];
    double f, d1, d2;
    gj_act<ACT>(x, &f, &d1, &d2);
    if (WHAT == 0) {
      O1[i] = (T)f;
    } else if (WHAT == 1) {
      const double dy = (double)DY[i];
      O1[i] = (T)(ACT == 0 ? (x > 0 ? dy : (x != x ? x : 0.0)) : dy * d1);
    } else {
      const double dy = (double)DY[i], g = (double)G[i];
      if (ACT == 0) {
        O1[i] = (T)(x != x ? x : 0.0);
        O2[i] = (T)(x > 0 ? g : (x != x ? x : 0.0));
      } else {
        O1[i] = (T)(g * dy * d2);
        O2[i] = (T)(g * d1);
      }
    }
  }
}

#define GJ_ACT_BODIES(NAME, ACT)                                                      \
  template <typename T>                                                               \
  GJ_DEV void NAME##_forward_body(const GjArgs& A) { act_body<T, ACT, 0>(A); }        \
  template <typename T>                                                               \
  GJ_DEV void NAME##_backward_body(const GjArgs& A) { act_body<T, ACT, 1>(A); }       \
  template <typename T>                                                               \
  GJ_DEV void NAME##_backward_grad_body(const GjArgs& A) { act_body<T, ACT, 2>(A); }
GJ_ACT_BODIES(relu, 0)
GJ_ACT_BODIES(gelu, 1)
GJ_ACT_BODIES(silu, 2)

#endif  // activations

// ---------------------------------------------------------------- coordinate jets
// The jets over a row's 2K primaries p = (l_1..l_K, t_1..t_K) of both gates (docs/math.md,
// "Latent coordinates"): inputs logits [N,K], d0, d1 (∂d0/∂t), d2 (∂²d0/∂t²) [N,K,P] and, for
// the HVP, v [N,2K] as the fifth input (A.in4); outputs first and HVP [N,2K,P], second
// [N,2K,2K,P], Gauss-Newton [N,2K,2K]. One block a row (no warp variants); the gate and its
// per-atom factors, and per column tile what a pass over the atoms gives, in shared memory,
// carved in the order of the kernel table's GateDevice.Coord layouts. Element loops are
// flattened over the row's output tile with 64-bit indices, consecutive threads on
// consecutive columns.
#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_SOFTMAX_JET) || defined(GJ_FAMILY_LOGISTIC_JET)

// GJ_COORD_EACH(R, a, c) { … }: the group's threads over the R×cw elements (a, c) of a tile,
// 64-bit. Needs cw, t and nt in scope.
#define GJ_COORD_EACH(R, a, c)                                                          \
  for (gj_ll gj_j_ = t, gj_n_ = (gj_ll)(R) * cw; gj_j_ < gj_n_; gj_j_ += nt)              \
    for (gj_ll a = gj_j_ / cw, c = gj_j_ - (gj_j_ / cw) * cw, gj_once_ = 1; gj_once_; gj_once_ = 0)

// The Gauss-Newton slab of one row over the primaries, out[a][b] = f_a f_b Σ_c X[a][c] X[b][c]
// for a, b < 2K, with X = (x0; Dt) and f = (sl·fl; ft): x0 the row's d0 centred under the gate
// z when z is not null (softmax), d0 itself otherwise (logistic). X is a 2K×st tile. Each
// thread owns one (a, b) per chunk of the block's threads and sums over c in order, so the slab
// is bitwise symmetric; the tiles are loaded once a row when one tile covers P, otherwise once
// a chunk. The slab's indices are 32-bit: the 2K×st tile in shared memory keeps K below 3100.
// Ends synchronised.
template <typename Grp, typename T>
GJ_DEV void gj_coord_gram(T* out, const T* D0, const T* Dt, const double* z, double sl, const double* fl,
                          const double* ft, double* X, gj_ll K, gj_ll P, gj_ll CT, gj_ll st) {
  const gj_u K2 = (gj_u)(2 * K), n2 = K2 * K2, nt = Grp::ntu();
  const bool one = CT >= P;
  for (gj_u base = 0; base < n2; base += nt) {
    const gj_u j = base + Grp::tu();
    const gj_u a = j / K2, b = j - (j / K2) * K2;
    double acc = 0.0;
    GJ_TILES {
      if (!one || base == 0) {
        GJ_SYNC();
        if (z)
          gj_tile_e<Grp>(D0, K, P, c0, cw, st, z, X, (double*)0);
        else
          gj_tile_copy<Grp>(D0, K, P, c0, cw, st, X);
        gj_tile_copy<Grp>(Dt, K, P, c0, cw, st, X + K * st);
        GJ_SYNC();
      }
      if (j < n2) {
        const double* xa = X + a * st;
        const double* xb = X + b * st;
        for (gj_ll c = 0; c < cw; ++c) acc += xa[c] * xb[c];
      }
    }
    if (j < n2) {
      const double fa = a < K ? sl * fl[a] : ft[a - K], fb = b < K ? sl * fl[b] : ft[b - K];
      out[j] = (T)(fa * fb * acc);
    }
  }
  GJ_SYNC();
}

// A coordinate jet's inputs after the logits (L) and d0 (D, from the gate's prologue): d1 (Dt)
// and d2 (Dtt, null for first and Gauss-Newton); K2 = 2K primaries.
#define GJ_COORD_INPUTS                \
  const T* Dt = (const T*)A.in[2];     \
  const T* Dtt = (const T*)A.in[3];    \
  (void)Dt; (void)Dtt;                 \
  const gj_ll K2 = 2 * K;              \
  (void)K2;
// The row's inputs: d0 (Dr), d1 (Dtr) and d2 (Dttr, or null), each [K,P].
#define GJ_COORD_ROW                                     \
  const T* Dr = D + row * K * P;                         \
  const T* Dtr = Dt + row * K * P;                       \
  const T* Dttr = Dtt ? Dtt + row * K * P : (const T*)0; \
  (void)Dttr;

#endif

#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_SOFTMAX_JET)

// ∂ζ_k/∂l_a = s·ζ_k·(δ_ak − ζ_a), as softmaxjet's softmaxJacobian rounds it.
GJ_DEV double gj_softmax_jac(const double* z, double s, gj_ll a, gj_ll k) {
  const double sa = s * z[a];
  return a == k ? sa * (1.0 - z[a]) : -(sa * z[k]);
}

// Shared: z[K], red[pow2 K], m[CT] (the gate means of d0's columns).
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_coord_first_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  GJ_COORD_INPUTS
  double* m = GJ_TAKE(sp, CT);
  T* F = (T*)A.out[0];
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    GJ_COORD_ROW
    T* Fr = F + row * K2 * P;
    GJ_TILES {
      for (gj_ll c = t; c < cw; c += nt) m[c] = gj_gate_dot(z, Dr, c0 + c, K, P);
      GJ_SYNC();
      GJ_COORD_EACH(K2, a, c) {
        double v;
        if (a < K)
          v = s * z[a] * ((double)Dr[a * P + c0 + c] - m[c]);
        else
          v = z[a - K] * (double)Dtr[(a - K) * P + c0 + c];
        Fr[a * P + c0 + c] = (T)v;
      }
      GJ_SYNC();
    }
  }
}

// Shared: z[K], red[pow2 K], e[K×st] (d0 centred under the gate).
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_coord_second_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  GJ_COORD_INPUTS
  double* e = GJ_TAKE(sp, K * st);
  T* S = (T*)A.out[0];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    GJ_COORD_ROW
    T* Sr = S + row * K2 * K2 * P;
    GJ_TILES {
      gj_tile_e<Grp>(Dr, K, P, c0, cw, st, z, e, (double*)0);
      GJ_SYNC();
      GJ_COORD_EACH(K2 * K2, ab, c) {
        const gj_ll a = ab / K2, b = ab - (ab / K2) * K2;
        double v;
        if (a < K && b < K)
          v = s2 * gj_second_entry(z, (gj_u)a, (gj_u)b, e[a * st + c], e[b * st + c]);
        else if (a < K)
          v = gj_softmax_jac(z, s, a, b - K) * (double)Dtr[(b - K) * P + c0 + c];
        else if (b < K)
          v = gj_softmax_jac(z, s, b, a - K) * (double)Dtr[(a - K) * P + c0 + c];
        else
          v = a == b ? z[a - K] * (double)Dttr[(a - K) * P + c0 + c] : 0.0;
        Sr[ab * P + c0 + c] = (T)v;
      }
      GJ_SYNC();
    }
  }
}

// Shared: z[K], red[pow2 K], u[K] (v_l − v̄), zv[K] (ζ_k·v_tk), then per tile mean[CT] (the
// gate means of d0), w[CT] (Σ_b ζ_b u_b e[b][c]) and mt[CT] (Σ_k ζ_k v_tk d1[k][c]).
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_coord_hvp_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  GJ_COORD_INPUTS
  double* u = GJ_TAKE(sp, K);
  double* zv = GJ_TAKE(sp, K);
  double* mean = GJ_TAKE(sp, CT);
  double* w = GJ_TAKE(sp, CT);
  double* mt = GJ_TAKE(sp, CT);
  const T* V = (const T*)A.in4;
  T* H = (T*)A.out[0];
  const double s2 = s * s;
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    GJ_COORD_ROW
    const T* Vr = V + row * K2;
    const double vbar = gj_gate_mean<Grp>(Vr, z, K, red, kp);
    for (gj_ll k = t; k < K; k += nt) {
      u[k] = (double)Vr[k] - vbar;
      zv[k] = z[k] * (double)Vr[K + k];
    }
    GJ_SYNC();
    T* Hr = H + row * K2 * P;
    GJ_TILES {
      for (gj_ll c = t; c < cw; c += nt) {
        const double mc = gj_gate_dot(z, Dr, c0 + c, K, P);
        double wc = 0.0, tc = 0.0;
        for (gj_ll b = 0; b < K; ++b) {
          wc += z[b] * u[b] * ((double)Dr[b * P + c0 + c] - mc);
          tc += zv[b] * (double)Dtr[b * P + c0 + c];
        }
        mean[c] = mc;
        w[c] = wc;
        mt[c] = tc;
      }
      GJ_SYNC();
      GJ_COORD_EACH(K2, a, c) {
        double v;
        if (a < K) {
          const gj_ll o = a * P + c0 + c;
          const double fa = s2 * z[a], ga = s * z[a];
          v = fa * (((double)Dr[o] - mean[c]) * u[a] - w[c]) + ga * ((double)Vr[K + a] * (double)Dtr[o] - mt[c]);
        } else {
          const gj_ll k = a - K, o = k * P + c0 + c;
          v = s * z[k] * u[k] * (double)Dtr[o] + zv[k] * (double)Dttr[o];
        }
        Hr[a * P + c0 + c] = (T)v;
      }
      GJ_SYNC();
    }
  }
}

// Shared: z[K], red[pow2 K], X[2K×st] (gj_coord_gram's tile).
template <typename T, typename Grp = GjBlock>
GJ_DEV void jet_coord_gauss_newton_body(const GjArgs& A) {
  GJ_SOFTMAX_PROLOGUE
  GJ_COORD_INPUTS
  double* X = GJ_TAKE(sp, K2 * st);
  T* G = (T*)A.out[0];
  GJ_ROWS {
    gj_softmax_gate<Grp>(L + row * K, K, s, z, red, kp);
    GJ_COORD_ROW
    gj_coord_gram<Grp>(G + row * K2 * K2, Dr, Dtr, z, s, z, z, X, K, P, CT, st);
  }
}

#endif  // softmax-gate coordinate jets

#if defined(GJ_ALL_FAMILIES) || defined(GJ_FAMILY_LOGISTIC_JET)

// The logistic gate's Jacobian is diagonal: ∂ζ_k/∂l_k = α_k σ'_k (the gate's d1).
// Shared of every logistic coordinate jet: z, d1, d2, d3 [K] (gj_logistic_gate).
template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_coord_first_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  GJ_COORD_INPUTS
  T* F = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_GATE;
    GJ_COORD_ROW
    T* Fr = F + row * K2 * P;
    GJ_TILES {
      GJ_COORD_EACH(K2, a, c) {
        double v;
        if (a < K)
          v = d1[a] * (double)Dr[a * P + c0 + c];
        else
          v = z[a - K] * (double)Dtr[(a - K) * P + c0 + c];
        Fr[a * P + c0 + c] = (T)v;
      }
    }
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_coord_second_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  GJ_COORD_INPUTS
  T* S = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_GATE;
    GJ_COORD_ROW
    T* Sr = S + row * K2 * K2 * P;
    GJ_TILES {
      GJ_COORD_EACH(K2 * K2, ab, c) {
        const gj_ll a = ab / K2, b = ab - (ab / K2) * K2;
        const gj_ll ka = a < K ? a : a - K, kb = b < K ? b : b - K;
        double v = 0.0;
        if (ka == kb) {
          const gj_ll o = ka * P + c0 + c;
          if (a < K && b < K)
            v = d2[ka] * (double)Dr[o];
          else if (a < K || b < K)
            v = d1[ka] * (double)Dtr[o];
          else
            v = z[ka] * (double)Dttr[o];
        }
        Sr[ab * P + c0 + c] = (T)v;
      }
    }
    GJ_SYNC();
  }
}

template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_coord_hvp_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  GJ_COORD_INPUTS
  const T* V = (const T*)A.in4;
  T* H = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_GATE;
    GJ_COORD_ROW
    const T* Vr = V + row * K2;
    T* Hr = H + row * K2 * P;
    GJ_TILES {
      GJ_COORD_EACH(K2, a, c) {
        const gj_ll k = a < K ? a : a - K, o = k * P + c0 + c;
        const double vl = (double)Vr[k], vt = (double)Vr[K + k];
        double v;
        if (a < K)
          v = d2[k] * vl * (double)Dr[o] + d1[k] * vt * (double)Dtr[o];
        else
          v = d1[k] * vl * (double)Dtr[o] + z[k] * vt * (double)Dttr[o];
        Hr[a * P + c0 + c] = (T)v;
      }
    }
    GJ_SYNC();
  }
}

// Shared: the gate, then X[2K×st] (gj_coord_gram's tile).
template <typename T, typename Grp = GjBlock>
GJ_DEV void logistic_coord_gauss_newton_body(const GjArgs& A) {
  GJ_LOGISTIC_PROLOGUE
  GJ_COORD_INPUTS
  double* X = GJ_TAKE(sp, K2 * st);
  T* G = (T*)A.out[0];
  GJ_ROWS {
    GJ_LOGISTIC_GATE;
    GJ_COORD_ROW
    gj_coord_gram<Grp>(G + row * K2 * K2, Dr, Dtr, (const double*)0, 1.0, d1, z, X, K, P, CT, st);
  }
}

#endif  // logistic-gate coordinate jets

// ---------------------------------------------------------------- entry points
// The entry points to instantiate come from the kernel table (internal/kernel), the one list
// of kernels: GJ_ENTRIES is GJ_ENTRY(<kernel>) for each kernel of the module being compiled,
// given by the compiler options (kernels.Options) under NVRTC and by the generated
// cudaops/internal/emu/kernel_entries.h in the emulator, and GJ_WARP_ENTRY(<kernel>) for each
// kernel's warp-per-row variant. Entry points are gj_<kernel>_f32/_f64 and
// gj_<kernel>_warp_f32/_f64.
#ifndef GJ_ENTRIES
#error "GJ_ENTRIES (the module's kernels, from the kernel table) is not defined"
#endif

// Entry points take the GjArgs fields as 14 separate 8-byte parameters (the launchers pass
// every parameter as one 64-bit value) and pack them for the body.
#define GJ_PARAMS                                                                              \
  const void *in0, const void *in1, const void *in2, const void *in3, void *out0, void *out1,  \
      void *out2, const double *floats, gj_ll i0, gj_ll i1, gj_ll i2, gj_ll tile, double s,      \
      const void *in4
#define GJ_PACK(A)                                                                             \
  GjArgs A;                                                                                    \
  A.in[0] = in0; A.in[1] = in1; A.in[2] = in2; A.in[3] = in3;                                  \
  A.out[0] = out0; A.out[1] = out1; A.out[2] = out2;                                           \
  A.floats = floats; A.i0 = i0; A.i1 = i1; A.i2 = i2; A.tile = tile; A.s = s; A.in4 = in4;

// GJ_WARP_ENTRY(name): the warp-per-row variant of row jet `name` (its body with GjWarp),
// gj_<name>_warp_f32/_f64. Its launch bounds also promise two blocks a multiprocessor (at most
// 128 registers a thread): with the first bound alone, ptxas 11.8 holds the warp variants to
// 32–64 registers and spills in most of them (the rows of a block's warps diverge in the
// compiler's eyes, and their barriers cost registers), while two blocks of eight rows still
// keep four times as many rows in flight as the block variant's row a block.
#if defined(GJ_WANT_F32)
#define GJ_ENTRY_F32(name) \
  GJ_KERNEL gj_##name##_f32(GJ_PARAMS) { GJ_PACK(a) name##_body<float>(a); }
#define GJ_WARP_ENTRY_F32(name) \
  GJ_WARP_KERNEL gj_##name##_warp_f32(GJ_PARAMS) { GJ_PACK(a) name##_body<float, GjWarp>(a); }
#else
#define GJ_ENTRY_F32(name)
#define GJ_WARP_ENTRY_F32(name)
#endif
#if defined(GJ_WANT_F64)
#define GJ_ENTRY_F64(name) \
  GJ_KERNEL gj_##name##_f64(GJ_PARAMS) { GJ_PACK(a) name##_body<double>(a); }
#define GJ_WARP_ENTRY_F64(name) \
  GJ_WARP_KERNEL gj_##name##_warp_f64(GJ_PARAMS) { GJ_PACK(a) name##_body<double, GjWarp>(a); }
#else
#define GJ_ENTRY_F64(name)
#define GJ_WARP_ENTRY_F64(name)
#endif
#define GJ_ENTRY(name) GJ_ENTRY_F32(name) GJ_ENTRY_F64(name)
#define GJ_WARP_ENTRY(name) GJ_WARP_ENTRY_F32(name) GJ_WARP_ENTRY_F64(name)

GJ_ENTRIES
