// TensorXf arithmetic and indexing on the device (backend/cuda/device/elementwise.rs):
// for each position of the iterated shape (C order), op(a, b) of up to two operands
// goes to the destination element there. Operands and destination are float32 read or
// written through strides in elements (0 where an operand is broadcast, negative for a
// reversed slice; the host offsets the pointers to the first element); an operand is a
// constant when its pointer is null. A new result has C-order destination strides; an
// assignment writes through the strides of the view its index names, or stores only
// where a mask is non-zero (HG_EW_STORE_WHERE). Comparisons give 1.0 or 0.0.
// The op codes are the positions in elementwise.rs `OPS`; each case names its op.
typedef unsigned int hg_u32;
typedef unsigned long long hg_u64;
typedef long long hg_i64;

#define HG_EW_DIMS 8
// dst = b where a != 0 (NaN included, as NumPy's `mask != 0`); elsewhere dst is kept
// (elementwise.rs `STORE_WHERE`)
#define HG_EW_STORE_WHERE 30

// The iterated shape and the strides of each operand and of the destination
// (elementwise.rs `EwLayout`).
struct EwLayout {
    hg_i64 shape[HG_EW_DIMS];
    hg_i64 strides_a[HG_EW_DIMS];
    hg_i64 strides_b[HG_EW_DIMS];
    hg_i64 strides_dst[HG_EW_DIMS];
    hg_u32 ndim;
    hg_u32 op;
    float const_a;
    float const_b;
};
static_assert(sizeof(EwLayout) == 272, "EwLayout layout (elementwise.rs)");

__device__ inline float hg_apply(hg_u32 op, float x, float y) {
    switch (op) {
    case 0: return x + y;                        // add
    case 1: return x - y;                        // subtract
    case 2: return x * y;                        // multiply
    case 3: return x / y;                        // true_divide
    case 4: return powf(x, y);                   // power
    case 5: return (x != x || y != y) ? x + y : fminf(x, y);  // minimum (NaN propagates, as NumPy)
    case 6: return (x != x || y != y) ? x + y : fmaxf(x, y);  // maximum
    case 7: return x < y ? 1.0f : 0.0f;          // less
    case 8: return x <= y ? 1.0f : 0.0f;         // less_equal
    case 9: return x > y ? 1.0f : 0.0f;          // greater
    case 10: return x >= y ? 1.0f : 0.0f;        // greater_equal
    case 11: return x == y ? 1.0f : 0.0f;        // equal
    case 12: return x != y ? 1.0f : 0.0f;        // not_equal
    case 13: return atan2f(x, y);                // arctan2
    case 14: return -x;                          // negative
    case 15: return x;                           // positive
    case 16: return fabsf(x);                    // absolute
    case 17: return sqrtf(x);                    // sqrt
    case 18: return expf(x);                     // exp
    case 19: return logf(x);                     // log
    case 20: return sinf(x);                     // sin
    case 21: return cosf(x);                     // cos
    case 22: return tanf(x);                     // tan
    case 23: return asinf(x);                    // arcsin
    case 24: return acosf(x);                    // arccos
    case 25: return atanf(x);                    // arctan
    case 26: return tanhf(x);                    // tanh
    case 27: return floorf(x);                   // floor
    case 28: return ceilf(x);                    // ceil
    case 29: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);  // sign
    default: return __int_as_float(0x7fc00000);  // refused on the host before launch
    }
}

extern "C" __global__ void hg_elementwise(const float* __restrict__ a, const float* __restrict__ b,
                                          const __grid_constant__ EwLayout l, hg_u64 n, float* __restrict__ dst) {
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    hg_u64 rem = i;
    hg_i64 oa = 0, ob = 0, od = 0;
    for (int d = (int)l.ndim - 1; d >= 0; --d) {
        hg_u64 extent = (hg_u64)l.shape[d];
        hg_i64 k = (hg_i64)(rem % extent);
        rem /= extent;
        oa += k * l.strides_a[d];
        ob += k * l.strides_b[d];
        od += k * l.strides_dst[d];
    }
    float x = a ? a[oa] : l.const_a;
    float y = b ? b[ob] : l.const_b;
    if (l.op == HG_EW_STORE_WHERE) {
        if (x != 0.0f) dst[od] = y;
        return;
    }
    dst[od] = hg_apply(l.op, x, y);
}
