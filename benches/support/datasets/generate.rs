//! The random source of the datasets: SplitMix64, seeded, so that every
//! run, on every machine, builds the same values.
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014) is one addition and three xor-shift-multiply
//! steps per 64 bits: small enough to keep here, good enough for test data.
//! The distributions below are the ones the datasets ask for: integers over
//! their whole range or a half-open range, floats in `[0, 1)` or a range,
//! a biased coin, a uniform or weighted choice.

use std::ops::Range;

/// The seed every dataset starts from.
pub(crate) const SEED: u64 = 0x243f_6a88_85a3_08d3;

/// A SplitMix64 generator.
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// 64 uniform bits.
    pub(crate) fn u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 32 uniform bits (the high half, the better mixed).
    pub(crate) fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }

    /// 16 uniform bits.
    pub(crate) fn u16(&mut self) -> u16 {
        (self.u64() >> 48) as u16
    }

    /// 8 uniform bits.
    pub(crate) fn u8(&mut self) -> u8 {
        (self.u64() >> 56) as u8
    }

    /// A uniform integer in `[0, n)`, by the high half of a 128-bit
    /// product (Lemire); its bias, below `n / 2^64`, is of no matter here.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "an empty range");
        ((u128::from(self.u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform integer in the half-open `range`.
    pub(crate) fn range(&mut self, range: Range<i64>) -> i64 {
        let width = range.end.abs_diff(range.start);
        range.start.wrapping_add(self.below(width) as i64)
    }

    /// A uniform index of a slice of `len` elements.
    pub(crate) fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// One of `items`, each as likely.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// An index of `weights`, each as likely as its weight.
    pub(crate) fn weighted(&mut self, weights: &[f32]) -> usize {
        let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        let mut at = self.f64() * total;
        for (i, &w) in weights.iter().enumerate() {
            at -= f64::from(w);
            if at < 0.0 {
                return i;
            }
        }
        weights.len() - 1
    }

    /// A uniform `f32` in `[0, 1)`: 24 random bits, the float's precision.
    pub(crate) fn f32(&mut self) -> f32 {
        (self.u64() >> 40) as f32 / (1u32 << 24) as f32
    }

    /// A uniform `f64` in `[0, 1)`: 53 random bits.
    pub(crate) fn f64(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform `f32` in the half-open `range`.
    pub(crate) fn f32_in(&mut self, range: Range<f32>) -> f32 {
        let x = range.start + (range.end - range.start) * self.f32();
        // Rounding may land on the end, which the range leaves out.
        if x < range.end { x } else { range.start }
    }

    /// `true` with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// `Some` half of the time, of what `f` makes.
    pub(crate) fn maybe<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.chance(0.5) {
            Some(f(self))
        } else {
            None
        }
    }

    /// A vector of a uniform length in `len`, of what `f` makes.
    pub(crate) fn vec<T>(
        &mut self,
        len: Range<usize>,
        mut f: impl FnMut(&mut Self) -> T,
    ) -> Vec<T> {
        let n = self.range(len.start as i64..len.end as i64) as usize;
        (0..n).map(|_| f(self)).collect()
    }
}
