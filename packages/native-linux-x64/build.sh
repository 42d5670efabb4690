#!/bin/sh
# Compiles grassflow's native kernels into lib/libgrassflow_native.so (C11, gcc or $CC, -O3). The AVX-512F, AVX2 and
# baseline code paths are all in the one library (target_clones); no -march, so it runs on any x86-64.
set -eu
cd "$(dirname "$0")"
mkdir -p lib
${CC:-gcc} -std=c11 -O3 -fno-math-errno -fPIC -shared -fopenmp-simd -fvisibility=default -Wall -Wextra -Werror \
  -o lib/libgrassflow_native.so src/gf_pool.c src/gf_info.c src/gf_layer_norm.c src/gf_gelu.c src/gf_expressive.c \
  src/gf_pair_sum.c src/gf_adamw.c src/gf_softmax_nll.c src/gf_dropout.c src/gf_gate.c \
  -lpthread -lm
