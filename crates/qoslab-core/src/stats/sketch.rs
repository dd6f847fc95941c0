//! A streaming quantile sketch with a relative-error guarantee, in the manner of DDSketch.
//!
//! References:
//! * C. Masson, J. E. Rim, H. K. Lee, "DDSketch: A Fast and Fully-Mergeable Quantile Sketch
//!   with Relative-Error Guarantees", PVLDB 12(12), 2019 — the log-spaced bucket mapping
//!   (γ = (1+α)/(1−α), index ⌈log_γ x⌉, estimate 2γ^i/(γ+1)), the rank definition used here and
//!   the "collapse the lowest buckets" bound on memory.
//!
//! # Guarantee
//!
//! Bucket `i` holds the values `x` with `γ^(i−1) < x ≤ γ^i`; its representative value is
//! `v_i = 2γ^i/(γ+1)`, and for every `x` in the bucket `|v_i − x| ≤ α·x` (the bound is reached
//! at both ends of the bucket). Zeros are counted apart and returned exactly.
//!
//! **Rank definition.** For `n` accepted values sorted as `x_(0) ≤ x_(1) ≤ … ≤ x_(n−1)`,
//! [`QuantileSketch::quantile`]`(q)` estimates `x_(r)` with the 0-based rank
//! `r = ⌊q·(n−1)⌋` ([`QuantileSketch::rank`]; this is the "lower" quantile of the DDSketch
//! paper, rank `⌊1 + q(n−1)⌋` counted from 1). The estimate `x̂` satisfies
//! `|x̂ − x_(r)| ≤ α·x_(r)` (up to floating-point rounding in the logarithm, of the order of
//! 1e-12 relative), provided no bucket collapse has affected that rank (see below). At `q = 0`
//! and `q = 1` the exact minimum and maximum are returned, and every estimate is clamped to
//! `[min, max]`, which can only move it closer to the true value.
//!
//! **Memory.** Counts live in one `Vec<u64>` spanning only the contiguous range of bucket
//! indices seen so far, growing at either end. The number of buckets is capped (default
//! [`DEFAULT_MAX_BUCKETS`]); when a new index would make the range wider than the cap, the
//! lowest buckets are folded into one catch-all bucket at the bottom of the allowed range.
//! After a collapse at index `k` (reported by [`QuantileSketch::collapsed_below`] as `γ^k`)
//! the bound above holds only for ranks whose true value exceeds `γ^k`: counts above `k` stay
//! exact, so those ranks still land in their own bucket. With α = 0.01 one bucket spans a
//! factor of 1.0202, so 2048 buckets cover a dynamic range of about 6·10^17 (e.g. 1 ns to
//! 19 years) before anything is collapsed.
//!
//! Values that are NaN, negative or infinite are not recorded; they are counted in
//! [`QuantileSketch::ignored`] so a caller can detect them.

/// The relative accuracy used throughout the simulator's statistics: 1 %.
pub const DEFAULT_ALPHA: f64 = 0.01;

/// Default cap on the number of buckets (16 KiB of counts).
pub const DEFAULT_MAX_BUCKETS: usize = 2048;

/// Buckets reserved on the first insertion.
const INITIAL_CAPACITY: usize = 16;

/// A DDSketch-style streaming quantile sketch; see the module documentation for its
/// guarantee.
#[derive(Debug, Clone)]
pub struct QuantileSketch {
    alpha: f64,
    gamma: f64,
    ln_gamma: f64,
    inv_ln_gamma: f64,
    max_buckets: usize,
    /// `counts[j]` is the count of bucket `offset + j`.
    counts: Vec<u64>,
    offset: i32,
    zero_count: u64,
    /// Accepted values, zeros included.
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// Highest bucket index that has absorbed collapsed lower buckets, if any.
    collapse_index: Option<i32>,
    ignored: u64,
}

impl QuantileSketch {
    /// A sketch with relative accuracy `alpha` and [`DEFAULT_MAX_BUCKETS`] buckets at most.
    ///
    /// # Panics
    /// If `alpha` is not in `[1e-6, 1)` (smaller values would overflow the bucket index).
    pub fn new(alpha: f64) -> Self {
        Self::with_max_buckets(alpha, DEFAULT_MAX_BUCKETS)
    }

    /// A sketch with relative accuracy `alpha` and at most `max_buckets` buckets.
    ///
    /// # Panics
    /// If `alpha` is not in `[1e-6, 1)` or `max_buckets` is zero.
    pub fn with_max_buckets(alpha: f64, max_buckets: usize) -> Self {
        assert!(
            (1e-6..1.0).contains(&alpha),
            "QuantileSketch: alpha must be in [1e-6, 1), got {alpha}"
        );
        assert!(
            max_buckets >= 1,
            "QuantileSketch: max_buckets must be at least 1"
        );
        let gamma = (1.0 + alpha) / (1.0 - alpha);
        let ln_gamma = gamma.ln();
        QuantileSketch {
            alpha,
            gamma,
            ln_gamma,
            inv_ln_gamma: 1.0 / ln_gamma,
            max_buckets,
            counts: Vec::new(),
            offset: 0,
            zero_count: 0,
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            collapse_index: None,
            ignored: 0,
        }
    }

    /// The 0-based rank `⌊q·(n−1)⌋` that [`quantile`](Self::quantile)`(q)` estimates among
    /// `n` sorted values (`n ≥ 1`, `q` in `[0, 1]`).
    pub fn rank(q: f64, n: u64) -> u64 {
        debug_assert!(n >= 1 && (0.0..=1.0).contains(&q));
        let r = (q * (n - 1) as f64).floor() as u64;
        r.min(n - 1)
    }

    /// Bucket index of a finite `x > 0`: `⌈log_γ x⌉`.
    #[inline]
    fn index(&self, x: f64) -> i32 {
        // ⌈v⌉ without `f64::ceil`, a library call on x86-64 without SSE4.1 (it was a fifth of
        // the cost of an add): truncate toward zero, then step up if that fell below v.
        let v = x.ln() * self.inv_ln_gamma;
        let t = v as i32;
        t + i32::from((t as f64) < v)
    }

    /// Representative value of bucket `i`: `2γ^i/(γ+1)`.
    fn value(&self, i: i32) -> f64 {
        2.0 * (i as f64 * self.ln_gamma).exp() / (self.gamma + 1.0)
    }

    /// Records one value.
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.add_n(x, 1);
    }

    /// Records `n` copies of `x`. Zero goes to a separate exact count; NaN, negative and
    /// infinite values are not recorded but counted in [`ignored`](Self::ignored).
    #[inline]
    pub fn add_n(&mut self, x: f64, n: u64) {
        if n == 0 {
            return;
        }
        // `is_finite` is false for NaN and both infinities.
        if !x.is_finite() || x < 0.0 {
            self.ignored += n;
            return;
        }
        self.count += n;
        self.sum += x * n as f64;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
        if x == 0.0 {
            self.zero_count += n;
            return;
        }
        let i = self.index(x);
        let rel = i as i64 - self.offset as i64;
        if rel >= 0 && (rel as usize) < self.counts.len() {
            self.counts[rel as usize] += n;
        } else {
            self.add_to_bucket_slow(i, n);
        }
    }

    /// Makes room for `new_len` buckets, doubling the capacity but never past the cap.
    fn reserve_for(&mut self, new_len: usize) {
        debug_assert!(new_len <= self.max_buckets);
        if new_len > self.counts.capacity() {
            let target = (self.counts.capacity() * 2)
                .max(INITIAL_CAPACITY)
                .min(self.max_buckets)
                .max(new_len);
            self.counts.reserve_exact(target - self.counts.len());
        }
    }

    /// Adds `n` to bucket `i` when `i` lies outside the current range (or the sketch has no
    /// buckets yet): grows the range, collapsing the lowest buckets if it would exceed the cap.
    fn add_to_bucket_slow(&mut self, i: i32, n: u64) {
        let len = self.counts.len();
        if len == 0 {
            self.reserve_for(1);
            self.counts.push(n);
            self.offset = i;
            return;
        }
        let lo = self.offset as i64;
        let hi = lo + len as i64 - 1;
        let i64_ = i as i64;
        let max = self.max_buckets as i64;
        if i64_ < lo {
            let new_len = hi - i64_ + 1;
            // Grow downwards to `i`, or to the lowest index the cap allows.
            let new_lo = if new_len > max { hi - max + 1 } else { i64_ };
            let grow = (lo - new_lo) as usize;
            if grow > 0 {
                self.reserve_for(len + grow);
                self.counts.resize(len + grow, 0);
                self.counts.rotate_right(grow);
                self.offset = new_lo as i32;
            }
            if new_lo > i64_ {
                self.note_collapse(new_lo as i32);
            }
            self.counts[0] += n;
        } else {
            debug_assert!(i64_ > hi);
            let new_len = i64_ - lo + 1;
            if new_len <= max {
                self.reserve_for(new_len as usize);
                self.counts.resize(new_len as usize, 0);
            } else {
                // Fold every bucket below `new_lo` into bucket `new_lo`.
                let new_lo = i64_ - max + 1;
                let shift = (new_lo - lo) as usize;
                let folded: u64 = self.counts[..shift.min(len)].iter().sum();
                if shift >= len {
                    self.counts.clear();
                } else {
                    self.counts.copy_within(shift.., 0);
                    self.counts.truncate(len - shift);
                }
                self.reserve_for(self.max_buckets);
                self.counts.resize(self.max_buckets, 0);
                self.counts[0] += folded;
                self.offset = new_lo as i32;
                if folded > 0 {
                    self.note_collapse(new_lo as i32);
                }
            }
            let last = self.counts.len() - 1;
            self.counts[last] += n;
        }
    }

    fn note_collapse(&mut self, k: i32) {
        self.collapse_index = Some(self.collapse_index.map_or(k, |c| c.max(k)));
    }

    /// Folds `other` into `self`: afterwards `self` answers as if it had seen both streams.
    ///
    /// # Panics
    /// If the two sketches were built with different `alpha`.
    pub fn merge(&mut self, other: &QuantileSketch) {
        assert!(
            self.alpha == other.alpha,
            "QuantileSketch::merge: alpha differs ({} vs {})",
            self.alpha,
            other.alpha
        );
        if other.count == 0 {
            self.ignored += other.ignored;
            return;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.zero_count += other.zero_count;
        self.ignored += other.ignored;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if let Some(k) = other.collapse_index {
            self.note_collapse(k);
        }
        for (j, &c) in other.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let i = other.offset + j as i32;
            let rel = i as i64 - self.offset as i64;
            if rel >= 0 && (rel as usize) < self.counts.len() {
                self.counts[rel as usize] += c;
            } else {
                self.add_to_bucket_slow(i, c);
            }
        }
    }

    /// Number of values recorded (zeros included, ignored values excluded).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether no value has been recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of zeros recorded.
    pub fn zero_count(&self) -> u64 {
        self.zero_count
    }

    /// Number of NaN, negative or infinite values that were offered and not recorded.
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Exact smallest value recorded (NaN when empty).
    pub fn min(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.min
        }
    }

    /// Exact largest value recorded (NaN when empty).
    pub fn max(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.max
        }
    }

    /// Sum of the values recorded.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Mean of the values recorded, from the running sum (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }

    /// The relative accuracy α the sketch was built with.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The cap on the number of buckets.
    pub fn max_buckets(&self) -> usize {
        self.max_buckets
    }

    /// Number of buckets currently held (the width of the index range seen).
    pub fn bucket_count(&self) -> usize {
        self.counts.len()
    }

    /// `Some(γ^k)` if buckets have been collapsed into bucket `k`: quantile estimates are
    /// then guaranteed only for ranks whose true value exceeds this bound.
    pub fn collapsed_below(&self) -> Option<f64> {
        self.collapse_index
            .map(|k| (k as f64 * self.ln_gamma).exp())
    }

    /// Heap bytes held by the sketch (the bucket array's capacity).
    pub fn bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }

    /// Estimate of the value of rank [`rank`](Self::rank)`(q, count)`; see the module
    /// documentation for the error bound. NaN when the sketch is empty or `q` is not in
    /// `[0, 1]`; the exact minimum at `q = 0` and maximum at `q = 1`.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 || !(0.0..=1.0).contains(&q) {
            return f64::NAN;
        }
        if q == 0.0 {
            return self.min;
        }
        if q == 1.0 {
            return self.max;
        }
        let r = Self::rank(q, self.count);
        if r < self.zero_count {
            return 0.0;
        }
        let mut cum = self.zero_count;
        for (j, &c) in self.counts.iter().enumerate() {
            cum += c;
            if cum > r {
                let v = self.value(self.offset + j as i32);
                return v.clamp(self.min, self.max);
            }
        }
        // Unreachable while the counts add up; the maximum is the safe answer.
        self.max
    }
}

#[cfg(test)]
#[path = "sketch_tests.rs"]
mod tests;
