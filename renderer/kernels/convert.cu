// Imports of other frameworks' arrays on the device (backend/cuda/device/import.rs):
// element i, in C order over `shape`, of a strided source of any DLPack bool, int, uint
// or float type becomes dst[i] as float32. Strides are in elements and may be negative or zero (a
// broadcast); `src` points at element (0, ..., 0). No host round trip: the import stays
// on the render stream.
typedef unsigned int hg_u32;
typedef unsigned long long hg_u64;
typedef long long hg_i64;

#define HG_MAX_DIMS 8

// The source's layout, by value (backend/cuda/device/import.rs `Strided`).
struct Strided {
    hg_i64 shape[HG_MAX_DIMS];
    hg_i64 strides[HG_MAX_DIMS];
    hg_u32 ndim;
    // the DLPack type as code << 8 | bits (code: 0 int, 1 uint, 2 float, 6 bool)
    hg_u32 dtype;
};
static_assert(sizeof(Strided) == 136, "Strided layout (import.rs)");

// IEEE binary16 -> float (as dlpack/import.rs half_to_f32).
__device__ inline float half_to_float(unsigned short h) {
    hg_u32 sign = ((hg_u32)(h >> 15)) << 31;
    hg_u32 exp = (h >> 10) & 0x1fu;
    hg_u32 frac = h & 0x3ffu;
    if (exp == 0u) {
        float v = (float)frac * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    hg_u32 bits = exp == 0x1fu ? (sign | 0x7f800000u | (frac << 13)) : (sign | ((exp + 112u) << 23) | (frac << 13));
    return __int_as_float((int)bits);
}

extern "C" __global__ void hg_gather(const char* __restrict__ src, const __grid_constant__ Strided s, hg_u64 n,
                                     float* __restrict__ dst) {
    hg_u64 i = (hg_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    hg_u64 rem = i;
    hg_i64 off = 0;
    for (int d = (int)s.ndim - 1; d >= 0; --d) {
        hg_u64 extent = (hg_u64)s.shape[d];
        hg_u64 k = rem % extent;
        rem /= extent;
        off += (hg_i64)k * s.strides[d];
    }
    float v;
    switch (s.dtype) {
    case 0x210u: v = half_to_float(((const unsigned short*)src)[off]); break;
    case 0x220u: v = ((const float*)src)[off]; break;
    case 0x240u: v = (float)((const double*)src)[off]; break;
    case 0x008u: v = (float)((const signed char*)src)[off]; break;
    case 0x010u: v = (float)((const short*)src)[off]; break;
    case 0x020u: v = (float)((const int*)src)[off]; break;
    case 0x040u: v = (float)((const long long*)src)[off]; break;
    case 0x108u: case 0x608u: v = (float)((const unsigned char*)src)[off]; break;
    case 0x110u: v = (float)((const unsigned short*)src)[off]; break;
    case 0x120u: v = (float)((const unsigned int*)src)[off]; break;
    case 0x140u: v = (float)((const unsigned long long*)src)[off]; break;
    default: v = __int_as_float(0x7fc00000); break;  // refused on the host before launch
    }
    dst[i] = v;
}
