// C interface of the host emulator of cudaops/kernels/gatejet.cu (used from Go through cgo).
#ifndef GJEMU_H
#define GJEMU_H

#ifdef __cplusplus
extern "C" {
#endif

// GjArgsC has the layout of GjArgs in gatejet.cu (checked by static_assert in emu.cpp).
typedef struct {
  const void* in[4];
  void* out[3];
  const double* floats;
  long long i0, i1, i2;
  long long tile;
  double s;
  const void* in4;
} GjArgsC;

// gj_emu_launch runs entry point name on grid blocks of block threads with smem_bytes of
// dynamic shared memory, one block after another, each block's threads as fibers meeting at
// __syncthreads. Between barriers the fibers run in order 0 (thread 0 first), 1 (reverse) or
// ≥ 2 (shuffled, seeded by order). It returns 0, or -1 with a message in err: unknown kernel,
// bad configuration, shared memory overrun, or __syncthreads reached from different places or
// by only some threads (divergence). *highwater receives the most shared memory (bytes) the
// kernel carved.
int gj_emu_launch(const char* name, long long grid, int block, long long smem_bytes, const GjArgsC* args,
                  int order, long long* highwater, char* err, int errlen);

// The entry points the emulator holds: gj_emu_kernel_count() of them, by index.
int gj_emu_kernel_count(void);
const char* gj_emu_kernel_name(int i);

#ifdef __cplusplus
}
#endif
#endif
