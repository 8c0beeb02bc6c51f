//! Piecewise-constant 1D and 2D distributions, for importance sampling emitters
//! (triangle areas, environment maps).

use super::Vec2;

/// A discrete distribution over `n` bins proportional to non-negative weights;
/// also usable as a piecewise-constant density on `[0, 1)`.
#[derive(Clone, Debug, Default)]
pub struct Distribution1D {
    /// Unnormalised weights.
    pub func: Vec<f32>,
    /// Normalised CDF with `n + 1` entries, `cdf[0] = 0`, `cdf[n] = 1`, followed by
    /// [`WINDOW`] entries of +∞ so that [`Self::find`] reads a whole window past any
    /// bin ([`Self::cdf`] is the CDF without them).
    cdf: Vec<f32>,
    /// Sum of the weights.
    pub sum: f32,
    /// Where [`Self::sample`]'s search starts and ends (a guide table): entry `k` of
    /// `m + 1` (`m = min(len, GUIDE_MAX)`) is the bin that `u = k / m` selects, so a `u`
    /// in `[k, k + 1) / m` lies between entries `k` and `k + 1` — one or two CDF reads
    /// instead of a binary search over the whole row, whose branches and cache misses
    /// were most of environment-map sampling. Empty: search the whole row.
    guide: Vec<u32>,
}

/// Most entries of a guide table: rows wider than this search a few bins per entry
/// (memory stays at 16 KiB a row for the widest environment maps).
const GUIDE_MAX: usize = 4096;

/// Bins past a guide entry that [`Distribution1D::find`] tells apart by counting CDF
/// values at or below `u`, without branches; a `u` further on (on an environment map
/// of this repository, 1 in 10⁴ of the marginal's samples and none of the rows') is
/// searched for.
const WINDOW: usize = 8;

impl Distribution1D {
    /// Builds from weights; `None` when empty, negative, non-finite or all zero.
    pub fn new(func: &[f32]) -> Option<Self> {
        if func.is_empty() || func.iter().any(|&f| !(f >= 0.0) || !f.is_finite()) {
            return None;
        }
        let mut cdf = Vec::with_capacity(func.len() + 1);
        let mut acc = 0.0f64;
        cdf.push(0.0f32);
        for &f in func {
            acc += f as f64;
            cdf.push(acc as f32);
        }
        if !(acc > 0.0) {
            return None;
        }
        for c in cdf.iter_mut() {
            *c = (*c as f64 / acc) as f32;
        }
        *cdf.last_mut().expect("non-empty") = 1.0;
        cdf.extend([f32::INFINITY; WINDOW]);
        let mut d = Distribution1D {
            func: func.to_vec(),
            cdf,
            sum: acc as f32,
            guide: Vec::new(),
        };
        // one sweep: the thresholds k / m increase, and so do the bins they select
        let (n, m) = (func.len(), func.len().min(GUIDE_MAX));
        let mut i = 0usize;
        d.guide = (0..=m)
            .map(|k| {
                let t = k as f32 / m as f32;
                while i < n && d.cdf[i + 1] <= t {
                    i += 1;
                }
                i as u32
            })
            .collect();
        Some(d)
    }

    /// The first bin `i` in `lo..hi` with `cdf[i + 1] > u` (`hi` if none).
    #[inline(always)]
    fn search(&self, u: f32, mut lo: usize, mut hi: usize) -> usize {
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.cdf[mid + 1] <= u {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The first bin with `cdf[i + 1] > u` (`len` if none). The guide entry below `u`
    /// gives a bin `lo` at or before it; when `cdf[lo] <= u`, the answer is `lo` plus the
    /// number of CDF values after `lo` at or below `u` (the CDF does not decrease), which
    /// is counted over a window without a branch: no branch that depends on `u` and one
    /// read after the guide entry's, where a binary search between the guide entries
    /// takes several of each.
    #[inline(always)]
    fn find(&self, u: f32) -> usize {
        let n = self.func.len();
        let Some(m) = self.guide.len().checked_sub(1).filter(|&m| m > 0) else {
            return self.search(u, 0, n); // a hand-made distribution without a guide
        };
        let k = ((u * m as f32) as usize).min(m - 1);
        let lo = self.guide[k] as usize;
        // the window after lo: the +inf padding keeps it inside the array
        let window: &[f32; WINDOW] = self.cdf[lo + 1..lo + 1 + WINDOW]
            .try_into()
            .expect("a window");
        // the values at or below u come first: their number is the trailing ones
        let at_or_below = window
            .iter()
            .enumerate()
            .fold(0u32, |m, (j, &c)| m | ((c <= u) as u32) << j);
        let below = (!at_or_below).trailing_zeros() as usize;
        // (lo = 0 needs no read: cdf[0] = 0, and a u below it gets bin 0 either way)
        if (lo == 0 || self.cdf[lo] <= u) && below < WINDOW {
            return lo + below;
        }
        self.find_slow(u, k)
    }

    /// [`Self::find`] where the window does not hold the answer: searched between the
    /// guide entries around `u`; where rounding puts `u` outside them (their bins are
    /// checked), over every bin.
    #[cold]
    fn find_slow(&self, u: f32, k: usize) -> usize {
        let n = self.func.len();
        let (mut lo, mut hi) = (self.guide[k] as usize, self.guide[k + 1] as usize);
        // the answer is >= lo iff every bin before lo ends at or below u
        if lo > 0 && !(self.cdf[lo] <= u) {
            lo = 0;
        }
        // and <= hi iff bin hi ends above u (or hi is past the last bin)
        if hi < n && !(self.cdf[hi + 1] > u) {
            hi = n;
        }
        self.search(u, lo, hi.max(lo))
    }

    /// The normalised CDF: `len() + 1` entries from 0 to 1.
    pub fn cdf(&self) -> &[f32] {
        &self.cdf[..self.func.len() + 1]
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.func.len()
    }

    /// Whether there are no bins.
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }

    /// Probability of picking bin `i`.
    pub fn pmf(&self, i: usize) -> f32 {
        self.func[i] / self.sum
    }

    /// Picks a bin for `u ∈ [0,1)`: returns (bin, its probability, `u` rescaled to `[0,1)` within the bin).
    pub fn sample(&self, u: f32) -> (usize, f32, f32) {
        let (i, du) = self.bin(u);
        (i, self.pmf(i), du)
    }

    /// [`Self::sample`] without the probability: the bin and `u` rescaled within it.
    #[inline(always)]
    fn bin(&self, u: f32) -> (usize, f32) {
        // first index with cdf[i+1] > u
        let n = self.func.len();
        let i = self.find(u).min(n - 1);
        let (c0, c1) = (self.cdf[i], self.cdf[i + 1]);
        // skip zero-probability bins that rounding could select (a bin whose CDF rises
        // has a positive weight: the weights are read only where it does not)
        let i = if c1 > c0 || self.func[i] > 0.0 {
            i
        } else {
            (0..n)
                .rev()
                .find(|&k| self.func[k] > 0.0 && self.cdf[k] <= u)
                .unwrap_or(i)
        };
        let (c0, c1) = (self.cdf[i], self.cdf[i + 1]);
        let du = if c1 > c0 {
            ((u - c0) / (c1 - c0)).clamp(0.0, 1.0 - f32::EPSILON / 2.0)
        } else {
            0.5
        };
        (i, du)
    }

    /// Samples a continuous position in `[0,1)`: returns (x, density at x, bin).
    pub fn sample_continuous(&self, u: f32) -> (f32, f32, usize) {
        let (x, i) = self.position(u);
        (x, self.density(i), i)
    }

    /// [`Self::sample_continuous`] without the density: the position and its bin.
    #[inline(always)]
    fn position(&self, u: f32) -> (f32, usize) {
        let (i, du) = self.bin(u);
        ((i as f32 + du) / self.func.len() as f32, i)
    }

    /// Density of [`Self::sample_continuous`] at `x ∈ [0,1)`.
    pub fn pdf_continuous(&self, x: f32) -> f32 {
        self.density(self.bin_at(x))
    }

    /// The bin holding position `x ∈ [0,1)` (clamped to the bins).
    #[inline(always)]
    fn bin_at(&self, x: f32) -> usize {
        let n = self.func.len();
        ((x * n as f32) as usize).min(n - 1)
    }

    /// The continuous density over bin `i`.
    fn density(&self, i: usize) -> f32 {
        self.pmf(i) * self.func.len() as f32
    }
}

/// A piecewise-constant density on `[0,1)²` over a `w × h` grid (rows = v).
#[derive(Clone, Debug, Default)]
pub struct Distribution2D {
    /// One conditional distribution over u per row.
    pub rows: Vec<Distribution1D>,
    /// Marginal distribution over rows (v).
    pub marginal: Distribution1D,
    /// The density of each cell, row-major: the marginal's density of its row times
    /// the row's density of its column, as [`Self::pdf`] gives it, read from one place
    /// instead of from two distributions' weights with two divisions.
    density: Vec<f32>,
    /// Columns of the grid.
    width: usize,
}

impl Distribution2D {
    /// Builds from `w * h` row-major weights; `None` if all are zero or invalid.
    pub fn new(func: &[f32], w: usize, h: usize) -> Option<Self> {
        if w == 0 || h == 0 || func.len() != w * h {
            return None;
        }
        let mut rows = Vec::with_capacity(h);
        let mut row_sums = Vec::with_capacity(h);
        for r in 0..h {
            let row = &func[r * w..(r + 1) * w];
            let s: f64 = row.iter().map(|&x| x as f64).sum();
            row_sums.push(s as f32);
            // a zero row still needs a valid conditional; it is never picked
            rows.push(
                Distribution1D::new(row)
                    .unwrap_or_else(|| Distribution1D::new(&vec![1.0; w]).expect("uniform")),
            );
        }
        let marginal = Distribution1D::new(&row_sums)?;
        // the products that `pdf_continuous` of both would give
        let density = (0..h)
            .flat_map(|r| {
                let (pdf_v, row) = (marginal.density(r), &rows[r]);
                (0..w).map(move |c| pdf_v * row.density(c))
            })
            .collect();
        Some(Distribution2D {
            rows,
            marginal,
            density,
            width: w,
        })
    }

    /// Samples `(u, v)` in `[0,1)²`; returns the point and its density.
    pub fn sample(&self, u: Vec2) -> (Vec2, f32) {
        let (v, row) = self.marginal.position(u.y);
        let (x, col) = self.rows[row].position(u.x);
        (Vec2::new(x, v), self.density[row * self.width + col])
    }

    /// Density of [`Self::sample`] at `p`.
    pub fn pdf(&self, p: Vec2) -> f32 {
        let row = self.marginal.bin_at(p.y);
        self.density[row * self.width + self.rows[row].bin_at(p.x)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discrete_sampling_matches_pmf() {
        let d = Distribution1D::new(&[1.0, 0.0, 3.0, 4.0]).unwrap();
        let n = 80_000;
        let mut counts = [0usize; 4];
        for k in 0..n {
            let (i, p, du) = d.sample((k as f32 + 0.5) / n as f32);
            assert!((p - d.pmf(i)).abs() < 1e-6 && (0.0..1.0).contains(&du));
            counts[i] += 1;
        }
        assert_eq!(counts[1], 0, "zero-weight bin never picked");
        for (i, &c) in counts.iter().enumerate() {
            assert!((c as f32 / n as f32 - d.pmf(i)).abs() < 1e-3);
        }
        assert!(Distribution1D::new(&[0.0, 0.0]).is_none());
        assert!(Distribution1D::new(&[1.0, f32::NAN]).is_none());
    }

    #[test]
    fn the_guided_search_finds_the_bin_of_a_search_over_every_bin() {
        // rows with zero bins, spikes and runs of equal CDF values, probed at every CDF
        // value, its neighbours in float, the guide thresholds and random points
        let mut rng = crate::math::Pcg32::new(3, 5);
        let mut rows: Vec<Vec<f32>> = vec![
            vec![1.0],
            vec![0.0, 0.0, 5.0, 0.0],
            vec![1e-30, 1.0, 1e-30, 0.0, 1e30],
            (0..1000)
                .map(|i| if i % 97 == 0 { 1e6 } else { 0.0 })
                .collect(),
        ];
        for n in [2, 3, 7, 64, 1000, 4097, 20000] {
            rows.push((0..n).map(|_| rng.next_f32().powi(8)).collect());
        }
        // probes answered through the window and through the search
        let mut windowed = [0usize; 2];
        for row in rows {
            let d = Distribution1D::new(&row).unwrap();
            let n = d.len();
            let mut us: Vec<f32> = (0..2000).map(|_| rng.next_f32()).collect();
            for &c in d.cdf() {
                us.extend([c, c.next_down(), c.next_up()]);
            }
            let m = d.guide.len() - 1;
            assert_eq!(m, n.min(GUIDE_MAX));
            us.extend((0..=m).flat_map(|k| {
                let t = k as f32 / m as f32;
                [t, t.next_down(), t.next_up()]
            }));
            for (k, &g) in d.guide.iter().enumerate() {
                assert_eq!(g as usize, d.search(k as f32 / m as f32, 0, n), "guide {k}");
            }
            for u in us.into_iter().filter(|u| (0.0..1.0).contains(u)) {
                let want = d.search(u, 0, n);
                assert_eq!(d.find(u), want, "n {n}, u {u}");
                // which way find went: the window after the guide entry, or the search
                let k = ((u * m as f32) as usize).min(m - 1);
                let lo = d.guide[k] as usize;
                windowed[usize::from(want >= lo && want < lo + WINDOW)] += 1;
            }
        }
        assert!(windowed[0] > 1000 && windowed[1] > 10_000, "{windowed:?}");
    }

    #[test]
    fn pdf2d_integrates_to_one_and_matches_sample() {
        let f: Vec<f32> = (0..12).map(|i| (i % 5) as f32).collect();
        let d = Distribution2D::new(&f, 4, 3).unwrap();
        let mut integral = 0.0;
        let m = 64;
        for i in 0..m {
            for j in 0..m {
                let p = Vec2::new((i as f32 + 0.5) / m as f32, (j as f32 + 0.5) / m as f32);
                integral += d.pdf(p) / (m * m) as f32;
                let (q, pdf) = d.sample(p);
                // the stored density is the product of the two 1D densities, bit for bit
                let row = ((q.y * 3.0) as usize).min(2);
                let product = d.marginal.pdf_continuous(q.y) * d.rows[row].pdf_continuous(q.x);
                assert_eq!(d.pdf(q).to_bits(), product.to_bits(), "at {q}");
                assert!(
                    (pdf - d.pdf(q)).abs() <= 1e-4 * pdf.max(1.0),
                    "{pdf} vs {}",
                    d.pdf(q)
                );
            }
        }
        assert!((integral - 1.0).abs() < 1e-4);
    }
}
