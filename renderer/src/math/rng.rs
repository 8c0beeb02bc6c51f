//! PCG32 (O'Neill 2014): small, fast, and with independent streams, so every
//! (pixel, sample) gets its own reproducible sequence whatever thread runs it.

/// A PCG32 generator (XSH-RR output, 64-bit state).
#[derive(Clone, Debug)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

const MULT: u64 = 6364136223846793005;

impl Pcg32 {
    /// A generator at position `seq_index`'s start of stream `stream`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut r = Pcg32 {
            state: 0,
            inc: (stream << 1) | 1,
        };
        r.next_u32();
        r.state = r.state.wrapping_add(seed);
        r.next_u32();
        r
    }

    /// The next 32 random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(MULT).wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// A uniform float in `[0, 1)` (24 random mantissa bits, never 1).
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }
}

/// A 64-bit finaliser (splitmix64) for deriving seeds from indices.
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_in_unit_interval_with_right_mean() {
        let mut r = Pcg32::new(42, 7);
        let n = 100_000;
        let mut sum = 0.0f64;
        for _ in 0..n {
            let x = r.next_f32();
            assert!((0.0..1.0).contains(&x));
            sum += x as f64;
        }
        // mean of U(0,1) is 1/2 with standard error 1/sqrt(12 n)
        let se = (1.0 / (12.0 * n as f64)).sqrt();
        assert!((sum / n as f64 - 0.5).abs() < 5.0 * se);
    }

    #[test]
    fn streams_differ() {
        let a: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(Pcg32::new(1, 1), |r, _: u32| Some(r.next_u32()))
            .collect();
        let b: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(Pcg32::new(1, 2), |r, _: u32| Some(r.next_u32()))
            .collect();
        assert_ne!(a, b);
    }
}
