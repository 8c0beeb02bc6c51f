//! Image blocks: weighted sample accumulation with the reconstruction filter
//! (each sample adds `w·L` and `w` to every pixel whose centre lies within the
//! filter radius; the developed pixel is `Σ w·L / Σ w`, as in Mitsuba).

use crate::error::Result;
use crate::io::{try_filled, Image};
use crate::math::{ceil_i32, floor_i32, Color, Vec2};
use crate::rfilters::AnyFilter;

/// Largest filter footprint along one axis, in pixels.
pub const MAX_FOOTPRINT: usize = 32;

/// Entries of the filter table over `[0, radius]`.
const LUT_SIZE: usize = 1024;

/// A reconstruction filter tabulated over `[0, radius]` with linear
/// interpolation, so a splat costs table lookups instead of `exp` calls
/// (the interpolation error is below 2e-6 of the peak for the default Gaussian).
#[derive(Clone, Debug)]
pub struct FilterTable {
    filter: AnyFilter,
    radius: f32,
    scale: f32,
    values: Vec<f32>,
}

impl FilterTable {
    /// Tabulates `filter`.
    pub fn new(filter: &AnyFilter) -> Self {
        let radius = filter.radius();
        let values = (0..=LUT_SIZE)
            .map(|i| filter.eval(radius * i as f32 / LUT_SIZE as f32))
            .chain([0.0])
            .collect();
        FilterTable {
            filter: *filter,
            radius,
            scale: LUT_SIZE as f32 / radius,
            values,
        }
    }

    /// The filter at offset `x` (pixels).
    #[inline(always)]
    pub fn eval(&self, x: f32) -> f32 {
        let f = x.abs() * self.scale;
        if !(f <= LUT_SIZE as f32) {
            return 0.0; // beyond the radius (or NaN)
        }
        // SAFETY: 0 <= f <= LUT_SIZE, so the truncation is in range (the checked `as`
        // costs a saturation test per call, and a splat makes eight calls)
        let i = unsafe { f.to_int_unchecked::<u32>() } as usize;
        // at f = LUT_SIZE: the last entry (t = 0; the table ends with one more, 0)
        let t = f - i as f32;
        self.values[i] + t * (self.values[i + 1] - self.values[i])
    }
}

#[cfg(target_arch = "x86_64")]
impl FilterTable {
    /// [`Self::eval`] of four offsets, lane by lane the same operations (so the same
    /// bits).
    #[inline(always)]
    pub fn eval4(&self, x: std::arch::x86_64::__m128) -> std::arch::x86_64::__m128 {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of every x86-64 CPU; the unchecked reads are in bounds: a
        // lane's index k is the truncation of an f in [0, LUT_SIZE] (lanes outside are
        // set to 0 first), and `values` holds LUT_SIZE + 2 entries (`new`), so k + 1 is
        // at most LUT_SIZE + 1
        unsafe {
            let f = _mm_mul_ps(_mm_andnot_ps(_mm_set1_ps(-0.0), x), _mm_set1_ps(self.scale));
            // lanes beyond the radius (or NaN) read entry 0 and are zeroed at the end
            let inside = _mm_cmple_ps(f, _mm_set1_ps(LUT_SIZE as f32));
            let f = _mm_and_ps(f, inside);
            let i = _mm_cvttps_epi32(f);
            let t = _mm_sub_ps(f, _mm_cvtepi32_ps(i));
            let mut k = [0u32; 4];
            _mm_storeu_si128(k.as_mut_ptr().cast(), i);
            debug_assert!(k.iter().all(|&k| (k as usize) + 1 < self.values.len()));
            let v = |k: u32| *self.values.get_unchecked(k as usize);
            let a = _mm_setr_ps(v(k[0]), v(k[1]), v(k[2]), v(k[3]));
            let b = _mm_setr_ps(v(k[0] + 1), v(k[1] + 1), v(k[2] + 1), v(k[3] + 1));
            let w = _mm_add_ps(a, _mm_mul_ps(t, _mm_sub_ps(b, a)));
            _mm_and_ps(w, inside)
        }
    }
}

/// A rectangle of accumulated `(r, g, b, alpha, weight)` values, and of
/// `extra_channels` more values per pixel (the AOVs of an `aov` integrator) that are
/// filtered with the same weights.
#[derive(Clone, Debug)]
pub struct Block {
    /// Left edge in crop pixel coordinates.
    pub x0: i32,
    /// Top edge in crop pixel coordinates.
    pub y0: i32,
    /// Width in pixels.
    pub w: i32,
    /// Height in pixels.
    pub h: i32,
    /// `w * h` accumulators.
    pub data: Vec<[f32; 5]>,
    /// Extra channels per pixel.
    pub extra_channels: usize,
    /// `w * h * extra_channels` weighted sums of the extra channels.
    pub extra: Vec<f32>,
}

/// The pixels of the block `x0, y0, bw, bh` that a sample at crop-space position `pos`
/// reaches through a filter of radius `r` (not the one-pixel box): the columns
/// `lo_x ..= hi_x` and rows `lo_y ..= hi_y`, or `None` when they are outside the block.
#[inline(always)]
fn footprint_range([x0, y0, bw, bh]: [i32; 4], r: f32, pos: Vec2) -> Option<[i32; 4]> {
    let (fx, gx) = (pos.x - 0.5 - r, pos.x - 0.5 + r);
    let (fy, gy) = (pos.y - 0.5 - r, pos.y - 0.5 + r);
    // a sample far from i32's limits (every sample of a render; also false for NaN)
    // rounds by plain truncations, one range test for the four instead of a saturating
    // conversion each (the splat's most frequent work after the weights)
    const LIMIT: f32 = (1 << 30) as f32;
    let [lo_x, hi_x, lo_y, hi_y] = if fx > -LIMIT && gx < LIMIT && fy > -LIMIT && gy < LIMIT {
        // SAFETY: |f| < 2^30 for all four (gx >= fx, gy >= fy)
        let trunc = |f: f32| unsafe { f.to_int_unchecked::<i32>() };
        let ceil = |f: f32| trunc(f) + (f > trunc(f) as f32) as i32;
        let floor = |f: f32| trunc(f) - (f < trunc(f) as f32) as i32;
        [ceil(fx), floor(gx), ceil(fy), floor(gy)]
    } else {
        [ceil_i32(fx), floor_i32(gx), ceil_i32(fy), floor_i32(gy)]
    };
    let (lo_x, hi_x) = (lo_x.max(x0), hi_x.min(x0 + bw - 1));
    let (lo_y, hi_y) = (lo_y.max(y0), hi_y.min(y0 + bh - 1));
    (lo_x <= hi_x && lo_y <= hi_y).then_some([lo_x, hi_x, lo_y, hi_y])
}

/// Calls `add(i, w)` for each pixel `i` (an index into the block `x0, y0, w, h`) that a
/// sample at crop-space position `pos` reaches, with its filter weight `w`.
#[inline(always)]
pub(crate) fn footprint(
    [x0, y0, bw, bh]: [i32; 4],
    table: &FilterTable,
    pos: Vec2,
    mut add: impl FnMut(usize, f32),
) {
    if let AnyFilter::Box { radius } = &table.filter {
        if *radius <= 0.5 {
            // one pixel: the one containing the sample
            let (x, y) = (floor_i32(pos.x) - x0, floor_i32(pos.y) - y0);
            if x >= 0 && y >= 0 && x < bw && y < bh {
                add((y * bw + x) as usize, 1.0);
            }
            return;
        }
    }
    let Some([lo_x, hi_x, lo_y, hi_y]) = footprint_range([x0, y0, bw, bh], table.radius, pos)
    else {
        return;
    };
    let nx = ((hi_x - lo_x + 1) as usize).min(MAX_FOOTPRINT);
    let ny = ((hi_y - lo_y + 1) as usize).min(MAX_FOOTPRINT);
    let mut wx = [0.0f32; MAX_FOOTPRINT];
    for (i, w) in wx.iter_mut().enumerate().take(nx) {
        *w = table.eval(lo_x as f32 + i as f32 + 0.5 - pos.x);
    }
    for j in 0..ny {
        let wy = table.eval(lo_y as f32 + j as f32 + 0.5 - pos.y);
        if wy == 0.0 {
            continue;
        }
        let row = ((lo_y + j as i32 - y0) * bw + (lo_x - x0)) as usize;
        for i in 0..nx {
            add(row + i, wx[i] * wy);
        }
    }
}

/// [`Block::splat`] of a sample whose footprint is 4 × 4 pixels of the block (the
/// default Gaussian's, away from the block's edges), with SSE: the eight filter weights
/// are two 4-lane [`FilterTable::eval4`]s, and a row's 20 floats are five vectors, each
/// the weights `wx · wy` of the pixels its lanes belong to times the channels
/// `v = (l, alpha, 1)` its lanes hold — the sums of [`footprint`] with [`accumulate`] to
/// the last bit. False (nothing added) for any other footprint.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn splat_4x4(block: &mut Block, table: &FilterTable, pos: Vec2, v: [f32; 5]) -> bool {
    use crate::accel::simd::{active, SimdLevel};
    if active() >= SimdLevel::Avx2 {
        // SAFETY: the level is one this CPU supports (`simd::level`)
        unsafe { splat_4x4_avx2(block, table, pos, v) }
    } else {
        splat_4x4_with::<false>(block, table, pos, v)
    }
}

/// [`splat_4x4`] compiled for AVX2: the same weights, each row three vectors (8 + 8 + 4
/// floats) instead of five, and the same sums to the last bit.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn splat_4x4_avx2(block: &mut Block, table: &FilterTable, pos: Vec2, v: [f32; 5]) -> bool {
    splat_4x4_with::<true>(block, table, pos, v)
}

/// [`splat_4x4`] with SSE rows, or AVX rows when `AVX` (only inside a function compiled
/// for AVX2).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn splat_4x4_with<const AVX: bool>(
    block: &mut Block,
    table: &FilterTable,
    pos: Vec2,
    v: [f32; 5],
) -> bool {
    use std::arch::x86_64::*;
    if matches!(table.filter, AnyFilter::Box { radius } if radius <= 0.5) {
        return false;
    }
    let Some([lo_x, hi_x, lo_y, hi_y]) = footprint_range(block.rect(), table.radius, pos) else {
        return false;
    };
    if hi_x - lo_x != 3 || hi_y - lo_y != 3 {
        return false;
    }
    let (x0, y0, w) = (block.x0, block.y0, block.w);
    let first = ((lo_y - y0) * w + (lo_x - x0)) as usize;
    let stride = w as usize;
    let flat = block.data.as_flattened_mut();
    // one bounds check for every row: the last row's 20 floats lie inside the block
    assert!(5 * (first + 3 * stride + 4) <= flat.len());
    let [r, g, bl, al, one] = v;
    // SAFETY: SSE2 is part of every x86-64 CPU, and AVX2 code runs only where the caller
    // is compiled for it (`splat_4x4_avx2`); row j starts at 5 (first + j stride) and
    // spans 20 floats, inside `flat` for j <= 3 (checked above)
    unsafe {
        // offsets `lo + i + ½ − pos` of the four columns and rows, as `footprint`
        let lanes = _mm_setr_ps(0.0, 1.0, 2.0, 3.0);
        let offsets = |lo: i32, p: f32| {
            let at = _mm_add_ps(_mm_set1_ps(lo as f32), lanes);
            _mm_sub_ps(_mm_add_ps(at, _mm_set1_ps(0.5)), _mm_set1_ps(p))
        };
        let wx = table.eval4(offsets(lo_x, pos.x));
        let wy = table.eval4(offsets(lo_y, pos.y));
        // the first float and the weight of each row; rows of weight zero add nothing
        // (not even a signed zero)
        let nonzero = !_mm_movemask_ps(_mm_cmpeq_ps(wy, _mm_setzero_ps()));
        let mut wys = [0.0f32; 4];
        _mm_storeu_ps(wys.as_mut_ptr(), wy);
        let base = flat.as_mut_ptr().add(5 * first);
        let rows = (0..4)
            .filter(|&j| nonzero >> j & 1 != 0)
            .map(|j| (base.add(5 * j * stride), wys[j]));
        if AVX {
            // lanes of a row's three vectors: pixel (wx) and channel (v) of each float
            let wx = _mm256_castps128_ps256(wx);
            let pixel = |i: [i32; 8]| {
                let i = _mm256_setr_epi32(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7]);
                _mm256_permutevar8x32_ps(wx, i)
            };
            let wx = [
                pixel([0, 0, 0, 0, 0, 1, 1, 1]),
                pixel([1, 1, 2, 2, 2, 2, 2, 3]),
            ];
            let wx_last = _mm256_castps256_ps128(pixel([3; 8]));
            let ch = [
                _mm256_setr_ps(r, g, bl, al, one, r, g, bl),
                _mm256_setr_ps(al, one, r, g, bl, al, one, r),
            ];
            let ch_last = _mm_setr_ps(g, bl, al, one);
            for (row, wy) in rows {
                let wy8 = _mm256_set1_ps(wy);
                for k in 0..2 {
                    let at = row.add(8 * k);
                    let add = _mm256_mul_ps(_mm256_mul_ps(wx[k], wy8), ch[k]);
                    _mm256_storeu_ps(at, _mm256_add_ps(_mm256_loadu_ps(at), add));
                }
                add4(row.add(16), wx_last, _mm_set1_ps(wy), ch_last);
            }
        } else {
            let wx = [
                _mm_shuffle_ps::<0b00_00_00_00>(wx, wx),
                _mm_shuffle_ps::<0b01_01_01_00>(wx, wx),
                _mm_shuffle_ps::<0b10_10_01_01>(wx, wx),
                _mm_shuffle_ps::<0b11_10_10_10>(wx, wx),
                _mm_shuffle_ps::<0b11_11_11_11>(wx, wx),
            ];
            let ch = [
                _mm_setr_ps(r, g, bl, al),
                _mm_setr_ps(one, r, g, bl),
                _mm_setr_ps(al, one, r, g),
                _mm_setr_ps(bl, al, one, r),
                _mm_setr_ps(g, bl, al, one),
            ];
            for (row, wy) in rows {
                let wy = _mm_set1_ps(wy);
                for k in 0..5 {
                    add4(row.add(4 * k), wx[k], wy, ch[k]);
                }
            }
        }
    }
    true
}

/// Adds `(w · wy) · ch` to the four floats at `at` (unaligned): a quarter of a splat row.
///
/// # Safety
/// `at` points to four floats that nothing else accesses meanwhile.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn add4(
    at: *mut f32,
    w: std::arch::x86_64::__m128,
    wy: std::arch::x86_64::__m128,
    ch: std::arch::x86_64::__m128,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's; SSE is part of x86-64
    unsafe {
        let add = _mm_mul_ps(_mm_mul_ps(w, wy), ch);
        _mm_storeu_ps(at, _mm_add_ps(_mm_loadu_ps(at), add));
    }
}

/// The sum of the filter weights over every pixel (crop or not) that a sample at
/// crop-space position `pos` reaches: the divisor of [`Block::splat_normalized`].
#[inline]
fn footprint_sum(table: &FilterTable, pos: Vec2) -> f32 {
    if let AnyFilter::Box { radius } = &table.filter {
        if *radius <= 0.5 {
            return 1.0;
        }
    }
    let r = table.radius;
    let axis = |c: f32| {
        let lo = ceil_i32(c - 0.5 - r);
        let n = ((floor_i32(c - 0.5 + r) - lo + 1).max(0) as usize).min(MAX_FOOTPRINT);
        (0..n)
            .map(|i| table.eval(lo as f32 + i as f32 + 0.5 - c))
            .sum::<f32>()
    };
    axis(pos.x) * axis(pos.y)
}

/// Adds the weighted sample `(w l, w alpha, w)` to accumulator `v`.
#[inline(always)]
fn accumulate(v: &mut [f32; 5], l: Color, alpha: f32, w: f32) {
    *v = [
        v[0] + w * l.x,
        v[1] + w * l.y,
        v[2] + w * l.z,
        v[3] + w * alpha,
        v[4] + w,
    ];
}

impl Block {
    /// A zeroed block covering `[x0, x0+w) × [y0, y0+h)`.
    pub fn new(x0: i32, y0: i32, w: i32, h: i32) -> Self {
        Self::with_extra(x0, y0, w, h, 0)
    }

    /// A zeroed block with `extra_channels` more channels per pixel.
    pub fn with_extra(x0: i32, y0: i32, w: i32, h: i32, extra_channels: usize) -> Self {
        let n = w.max(0) as usize * h.max(0) as usize;
        Block {
            x0,
            y0,
            w,
            h,
            data: vec![[0.0; 5]; n],
            extra_channels,
            extra: vec![0.0; n * extra_channels],
        }
    }

    fn rect(&self) -> [i32; 4] {
        [self.x0, self.y0, self.w, self.h]
    }

    /// Splats a sample at crop-space position `pos` (pixel (x, y) spans [x, x+1)).
    #[inline]
    pub fn splat(&mut self, table: &FilterTable, pos: Vec2, l: Color, alpha: f32) {
        #[cfg(target_arch = "x86_64")]
        if splat_4x4(self, table, pos, [l.x, l.y, l.z, alpha, 1.0]) {
            return;
        }
        let rect = self.rect();
        let data = &mut self.data;
        footprint(rect, table, pos, |i, w| {
            accumulate(&mut data[i], l, alpha, w)
        });
    }

    /// Splats `l` at crop-space position `pos` with filter weights that sum to 1 over the
    /// sample's whole footprint (pixels outside the block included): light tracing adds
    /// estimates into pixels instead of averaging them, see [`Self::develop_sums`].
    #[inline]
    pub fn splat_normalized(&mut self, table: &FilterTable, pos: Vec2, l: Color, alpha: f32) {
        let sum = footprint_sum(table, pos);
        if !(sum > 0.0) {
            return;
        }
        let inv = 1.0 / sum;
        let rect = self.rect();
        let data = &mut self.data;
        footprint(rect, table, pos, |i, w| {
            accumulate(&mut data[i], l, alpha, w * inv)
        });
    }

    /// Splats a sample with its extra channels `extra` (`extra_channels` values).
    #[inline]
    pub fn splat_extra(
        &mut self,
        table: &FilterTable,
        pos: Vec2,
        l: Color,
        alpha: f32,
        extra: &[f32],
    ) {
        let rect = self.rect();
        let (data, acc, k) = (&mut self.data, &mut self.extra, self.extra_channels);
        footprint(rect, table, pos, |i, w| {
            accumulate(&mut data[i], l, alpha, w);
            for (d, v) in acc[i * k..(i + 1) * k].iter_mut().zip(extra) {
                *d += w * v;
            }
        });
    }

    /// Adds another block's accumulators (the overlap only; the same extra channels).
    pub fn merge(&mut self, o: &Block) {
        let k = self.extra_channels;
        let x_lo = self.x0.max(o.x0);
        let x_hi = (self.x0 + self.w).min(o.x0 + o.w);
        let y_lo = self.y0.max(o.y0);
        let y_hi = (self.y0 + self.h).min(o.y0 + o.h);
        for y in y_lo..y_hi {
            for x in x_lo..x_hi {
                let si = ((y - o.y0) * o.w + (x - o.x0)) as usize;
                let di = ((y - self.y0) * self.w + (x - self.x0)) as usize;
                let (s, d) = (&o.data[si], &mut self.data[di]);
                for c in 0..5 {
                    d[c] += s[c];
                }
                for c in 0..k {
                    self.extra[di * k + c] += o.extra[si * k + c];
                }
            }
        }
    }

    /// A zeroed block with `extra_channels` more channels per pixel, or an error saying
    /// how much memory it needed (a film accumulator can be gigabytes: failing to get
    /// them must not abort).
    pub fn try_new(x0: i32, y0: i32, w: i32, h: i32, extra_channels: usize) -> Result<Self> {
        let n = w.max(0) as usize * h.max(0) as usize;
        let what = || format!("a {w} x {h} film accumulator");
        let data = try_filled(n, [0.0; 5], what)?;
        let extra = try_filled(n.saturating_mul(extra_channels), 0.0, what)?;
        Ok(Block {
            x0,
            y0,
            w,
            h,
            data,
            extra_channels,
            extra,
        })
    }

    /// Normalises by the weights into an image with 3 (rgb) or 4 (rgba) channels.
    pub fn develop(&self, alpha: bool) -> Result<Image> {
        let ch = if alpha { 4 } else { 3 };
        let mut img = Image::try_new(self.w as usize, self.h as usize, ch)?;
        for (px, v) in img.data.chunks_exact_mut(ch).zip(&self.data) {
            let inv = if v[4] > 0.0 { 1.0 / v[4] } else { 0.0 };
            for c in 0..ch {
                px[c] = v[c] * inv;
            }
        }
        Ok(img)
    }

    /// The accumulated sums without normalisation (light tracing), into an image with 3
    /// (rgb) or 4 (rgba, alpha 1) channels.
    pub fn develop_sums(&self, alpha: bool) -> Result<Image> {
        let ch = if alpha { 4 } else { 3 };
        let mut img = Image::try_new(self.w as usize, self.h as usize, ch)?;
        for (px, v) in img.data.chunks_exact_mut(ch).zip(&self.data) {
            px[..3].copy_from_slice(&v[..3]);
            if alpha {
                px[3] = 1.0;
            }
        }
        Ok(img)
    }

    /// Normalises by the weights into the film of an `aov` render (integrators/aov.rs):
    /// `r, g, b` (and `alpha` when `alpha`), `r, g, b, alpha` again when `nested`, then
    /// the extra channels.
    pub fn develop_aov(&self, alpha: bool, nested: bool) -> Result<Image> {
        let k = self.extra_channels;
        let base = if alpha { 4 } else { 3 };
        let ch = base + if nested { 4 } else { 0 } + k;
        let mut img = Image::try_new(self.w as usize, self.h as usize, ch)?;
        let sums = self.data.iter().enumerate();
        for (px, (i, v)) in img.data.chunks_exact_mut(ch).zip(sums) {
            let inv = if v[4] > 0.0 { 1.0 / v[4] } else { 0.0 };
            let rgba = v[..4].iter().map(|x| x * inv);
            let nested_rgba = rgba.clone().take(if nested { 4 } else { 0 });
            let extra = self.extra[i * k..(i + 1) * k].iter().map(|x| x * inv);
            let values = rgba.take(base).chain(nested_rgba).chain(extra);
            for (p, x) in px.iter_mut().zip(values) {
                *p = x;
            }
        }
        Ok(img)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_filter() {
        for f in [
            AnyFilter::Tent { radius: 1.5 },
            AnyFilter::default(),
            AnyFilter::Gaussian {
                stddev: 1.0,
                radius: 4.0,
            },
        ] {
            let t = FilterTable::new(&f);
            for k in -600..=600 {
                let x = k as f32 * f.radius() / 500.0;
                assert!(
                    (t.eval(x) - f.eval(x)).abs() < 2e-5 * f.eval(0.0),
                    "{f:?} at {x}: {} vs {}",
                    t.eval(x),
                    f.eval(x)
                );
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn four_lane_filter_lookups_are_the_scalar_ones() {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_storeu_ps};
        let mut rng = crate::math::Pcg32::new(11, 3);
        for f in [AnyFilter::default(), AnyFilter::Tent { radius: 1.5 }] {
            let t = FilterTable::new(&f);
            let r = f.radius();
            // inside, on table entries, on and beyond the radius, and NaN
            let mut xs: Vec<f32> = (0..4000)
                .map(|_| (rng.next_f32() * 2.4 - 1.2) * r)
                .collect();
            xs.extend((0..=LUT_SIZE).map(|i| r * i as f32 / LUT_SIZE as f32));
            xs.extend([
                r,
                -r,
                r.next_up(),
                -r.next_up(),
                1e30,
                -1e30,
                f32::INFINITY,
                f32::NAN,
            ]);
            for x in xs.chunks(4) {
                let mut x4 = [0.5f32; 4];
                x4[..x.len()].copy_from_slice(x);
                let mut w = [0.0f32; 4];
                // SAFETY: SSE2 is part of x86-64; both arrays hold four floats
                unsafe { _mm_storeu_ps(w.as_mut_ptr(), t.eval4(_mm_loadu_ps(x4.as_ptr()))) };
                for k in 0..4 {
                    assert_eq!(
                        w[k].to_bits(),
                        t.eval(x4[k]).to_bits(),
                        "{f:?} at {}",
                        x4[k]
                    );
                }
            }
        }
    }

    /// Splats random samples with `splat` and with the per-pixel loop, and checks that
    /// the accumulators agree to the last bit.
    fn check_splat_agrees_with_the_pixel_loop(
        what: &str,
        splat: impl Fn(&mut Block, &FilterTable, Vec2, Color, f32),
    ) {
        let mut rng = crate::math::Pcg32::new(7, 1);
        for f in [
            AnyFilter::default(),
            AnyFilter::Tent { radius: 1.5 },
            AnyFilter::Box { radius: 1.0 },
            AnyFilter::Gaussian {
                stddev: 1.0,
                radius: 4.0,
            },
        ] {
            let table = FilterTable::new(&f);
            let mut rows = Block::new(-2, -3, 21, 19);
            let mut pixels = rows.clone();
            for k in 0..4000 {
                // positions across the block and beyond its edges, some on pixel edges
                let mut pos = Vec2::new(rng.next_f32() * 27.0 - 5.0, rng.next_f32() * 25.0 - 6.0);
                if k % 7 == 0 {
                    pos = pos.floor();
                }
                let (l, alpha) = (Color::new(rng.next_f32(), 2.0, -0.5), rng.next_f32());
                splat(&mut rows, &table, pos, l, alpha);
                let rect = pixels.rect();
                let data = &mut pixels.data;
                footprint(rect, &table, pos, |i, w| {
                    accumulate(&mut data[i], l, alpha, w)
                });
            }
            for (a, b) in rows.data.iter().zip(&pixels.data) {
                assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "{what}, {f:?}");
            }
        }
    }

    #[test]
    fn row_splats_add_the_same_sums_as_a_pixel_at_a_time() {
        // the SSE and AVX2 rows (four pixels wide) and the per-pixel loop (any other
        // width) must give the same accumulators to the last bit, edges and clipped
        // footprints included
        check_splat_agrees_with_the_pixel_loop("Block::splat", |b, t, pos, l, alpha| {
            b.splat(t, pos, l, alpha)
        });
        #[cfg(target_arch = "x86_64")]
        {
            let pixel_loop = |b: &mut Block, t: &FilterTable, pos: Vec2, l: Color, alpha: f32| {
                let rect = b.rect();
                let data = &mut b.data;
                footprint(rect, t, pos, |i, w| accumulate(&mut data[i], l, alpha, w));
            };
            check_splat_agrees_with_the_pixel_loop("SSE rows", |b, t, pos, l, alpha| {
                if !splat_4x4_with::<false>(b, t, pos, [l.x, l.y, l.z, alpha, 1.0]) {
                    pixel_loop(b, t, pos, l, alpha);
                }
            });
            if crate::accel::simd::SimdLevel::Avx2.supported() {
                check_splat_agrees_with_the_pixel_loop("AVX2 rows", |b, t, pos, l, alpha| {
                    // SAFETY: this CPU has AVX2 (checked above)
                    let done = unsafe { splat_4x4_avx2(b, t, pos, [l.x, l.y, l.z, alpha, 1.0]) };
                    if !done {
                        pixel_loop(b, t, pos, l, alpha);
                    }
                });
            }
        }
    }

    #[test]
    fn splat_weights_normalise_to_the_sample_value() {
        // any filter: a block filled by samples of constant value develops to that value
        for f in [
            AnyFilter::Box { radius: 0.5 },
            AnyFilter::Tent { radius: 1.0 },
            AnyFilter::default(),
        ] {
            let mut b = Block::new(0, 0, 8, 8);
            let f = FilterTable::new(&f);
            for k in 0..500 {
                let pos = Vec2::new((k * 37 % 800) as f32 / 100.0, (k * 53 % 800) as f32 / 100.0);
                b.splat(&f, pos, Color::new(0.25, 0.5, 2.0), 1.0);
            }
            let img = b.develop(true).unwrap();
            for p in img.data.chunks_exact(4) {
                assert!(
                    (p[0] - 0.25).abs() < 1e-5
                        && (p[2] - 2.0).abs() < 1e-5
                        && (p[3] - 1.0).abs() < 1e-5,
                    "{p:?}"
                );
            }
        }
    }

    #[test]
    fn extra_channels_share_the_weights_and_merge_like_the_image() {
        for f in [AnyFilter::Box { radius: 0.5 }, AnyFilter::default()] {
            let table = FilterTable::new(&f);
            let (mut whole, mut left, mut right) = (
                Block::with_extra(0, 0, 6, 4, 2),
                Block::with_extra(-2, -2, 7, 8, 2),
                Block::with_extra(1, -2, 7, 8, 2),
            );
            for k in 0..300 {
                let pos = Vec2::new((k * 37 % 600) as f32 / 100.0, (k * 53 % 400) as f32 / 100.0);
                let (l, extra) = (Color::new(0.25, 0.5, 2.0), [3.0, -1.5]);
                whole.splat_extra(&table, pos, l, 1.0, &extra);
                let half = if pos.x < 3.0 { &mut left } else { &mut right };
                half.splat_extra(&table, pos, l, 1.0, &extra);
            }
            let mut merged = Block::with_extra(0, 0, 6, 4, 2);
            merged.merge(&left);
            merged.merge(&right);
            let (a, b) = (
                whole.develop_aov(true, true).unwrap(),
                merged.develop_aov(true, true).unwrap(),
            );
            assert_eq!(a.channels, 4 + 4 + 2);
            for (p, q) in a.data.chunks_exact(10).zip(b.data.chunks_exact(10)) {
                let want = [0.25, 0.5, 2.0, 1.0, 0.25, 0.5, 2.0, 1.0, 3.0, -1.5];
                for c in 0..10 {
                    assert!((p[c] - want[c]).abs() < 1e-5, "{f:?}: {p:?}");
                    assert!((p[c] - q[c]).abs() < 1e-5, "merged halves: {p:?} vs {q:?}");
                }
            }
            // without the nested image: rgb base channels, then the extra ones
            let rgb = whole.develop_aov(false, false).unwrap();
            assert_eq!(rgb.channels, 3 + 2);
            assert!((rgb.data[3] - 3.0).abs() < 1e-5 && (rgb.data[4] + 1.5).abs() < 1e-5);
        }
    }

    #[test]
    fn gaussian_spreads_to_neighbours_and_box_does_not() {
        let mut g = Block::new(0, 0, 5, 5);
        g.splat(
            &FilterTable::new(&AnyFilter::default()),
            Vec2::new(2.5, 2.5),
            Color::ONE,
            1.0,
        );
        assert!(g.data[2 * 5 + 1][4] > 0.0 && g.data[2 * 5 + 2][4] > g.data[2 * 5 + 1][4]);
        let mut b = Block::new(0, 0, 5, 5);
        b.splat(
            &FilterTable::new(&AnyFilter::Box { radius: 0.5 }),
            Vec2::new(2.5, 2.5),
            Color::ONE,
            1.0,
        );
        assert_eq!(b.data.iter().filter(|v| v[4] > 0.0).count(), 1);
    }
}
