/* The counter-based generator every tensor of a step is drawn from.
 *
 * Value j of a stream: splitmix64(key + (j+1) * 0x9E3779B97F4A7C15), its top
 * 24 bits -> u in [0,1), returned as (2u - 1) * scale in fp32 (exact: 2u - 1
 * has at most 24 significant bits). key = seed XOR fnv1a64(stream name).
 * Counter-based, so element j can be drawn by any thread of any backend in
 * any order and every backend fills a tensor with the same values:
 * weights are made on the device, nothing is uploaded, and the CPU golden
 * files still describe what the GPU computes. tests/golden/gen_step_golden.py
 * implements the same function in Python. */
#ifndef AITK_KERNELS_MATH_DRAW_H
#define AITK_KERNELS_MATH_DRAW_H

#include <stdint.h>

#include "kernels/math/hd.h"

AITK_HD static inline uint64_t aitk_splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The stream key of `name` under `seed`. Host only in practice (names are
 * strings), but harmless on the device. */
AITK_HD static inline uint64_t aitk_draw_key(uint64_t seed, const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *name; name++)
        h = (h ^ (uint8_t)*name) * 0x100000001B3ull;
    return seed ^ h;
}

/* Value j of the stream `key`, uniform in [-scale, scale). */
AITK_HD static inline float aitk_draw(uint64_t key, uint64_t j, float scale)
{
    uint64_t z = aitk_splitmix64(key + (j + 1) * 0x9E3779B97F4A7C15ull);
    float u = (float)(z >> 40) * (1.0f / 16777216.0f);
    return (2.0f * u - 1.0f) * scale;
}

#endif
