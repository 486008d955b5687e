// Kiln GroupNorm: 896 slices of 2097152 elements (8 groups over [112, 64, 512,
// 512]), 4-wide vectors.
#include "kiln/groupnorm.cuh"
#include "kiln/ops.cuh"

// Kiln's generated kernel for L1_35 as emitted, and variants of it that
// differ only in how the input and output are indexed or qualified.
#define GEN_SUMS_QUAL
#define GEN_STORE_AT ii

#define GEN_NAME gn_8be871
#define GEN_LOAD_AT ii
#include "gen_l1_35_body.cuh"
#undef GEN_NAME
#undef GEN_LOAD_AT

#define GEN_NAME gnGenA
#define GEN_LOAD_AT i
#include "gen_l1_35_body.cuh"
#undef GEN_NAME

#undef GEN_STORE_AT
#define GEN_STORE_AT i
#define GEN_NAME gnGenB
#include "gen_l1_35_body.cuh"
#undef GEN_NAME
#undef GEN_LOAD_AT
#undef GEN_STORE_AT
#undef GEN_SUMS_QUAL

#define GEN_NAME gnGenC
#define GEN_LOAD_AT ii
#define GEN_STORE_AT ii
#define GEN_SUMS_QUAL __restrict__
#include "gen_l1_35_body.cuh"
