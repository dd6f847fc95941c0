//! Tests of the quantile sketch against exact sample quantiles.
use super::*;
use crate::rng::SimRng;
use crate::traffic::sizes::standard_normal;

const N: usize = 1_000_000;
const QS: [f64; 6] = [0.01, 0.1, 0.5, 0.9, 0.99, 0.999];
/// Allowance for rounding in `ln` near a bucket boundary (see the module docs).
const ROUNDING: f64 = 1e-9;

/// Feeds `xs` to a fresh sketch and checks every quantile in `QS` (and q = 0, 1) against
/// the exact sorted sample of the same rank.
fn check_against_exact(mut xs: Vec<f64>, alpha: f64) {
    let mut s = QuantileSketch::new(alpha);
    for &x in &xs {
        s.add(x);
    }
    xs.sort_by(f64::total_cmp);
    assert_eq!(s.count(), xs.len() as u64);
    assert_eq!(s.quantile(0.0), xs[0]);
    assert_eq!(s.quantile(1.0), xs[xs.len() - 1]);
    for q in QS {
        let exact = xs[QuantileSketch::rank(q, xs.len() as u64) as usize];
        let est = s.quantile(q);
        let err = (est - exact).abs() / exact;
        assert!(
            err <= alpha * (1.0 + ROUNDING),
            "q={q}: estimate {est} vs exact {exact}: relative error {err} > {alpha}"
        );
    }
    let exact_mean = xs.iter().sum::<f64>() / xs.len() as f64;
    assert!((s.mean() - exact_mean).abs() <= 1e-9 * exact_mean);
}

#[test]
fn rank_definition() {
    assert_eq!(QuantileSketch::rank(0.0, 10), 0);
    assert_eq!(QuantileSketch::rank(1.0, 10), 9);
    assert_eq!(QuantileSketch::rank(0.5, 10), 4); // ⌊4.5⌋
    assert_eq!(QuantileSketch::rank(0.5, 11), 5);
    assert_eq!(QuantileSketch::rank(0.99, 1_000_000), 989_999); // ⌊989 999.01⌋
    assert_eq!(QuantileSketch::rank(0.3, 1), 0);
    // Small sample, exact values far apart: the estimate must be the lower-rank element.
    let mut s = QuantileSketch::new(DEFAULT_ALPHA);
    for x in [1.0, 10.0, 100.0, 1000.0] {
        s.add(x);
    }
    // n = 4: q = 0.5 → rank ⌊1.5⌋ = 1 → 10; q = 0.7 → rank ⌊2.1⌋ = 2 → 100.
    assert!((s.quantile(0.5) - 10.0).abs() <= 0.1);
    assert!((s.quantile(0.7) - 100.0).abs() <= 1.0);
    assert!((s.quantile(0.66) - 10.0).abs() <= 0.1); // ⌊1.98⌋ = 1
}

/// The bucket mapping itself: every value is within α of its bucket's representative,
/// and the bound is tight (reached to within 0.1 %), so a wrong γ fails one side or the
/// other.
#[test]
fn bucket_mapping_error_is_alpha_and_tight() {
    for alpha in [DEFAULT_ALPHA, 0.05, 0.001] {
        let s = QuantileSketch::new(alpha);
        let mut worst: f64 = 0.0;
        let steps = 200_000;
        for k in 0..=steps {
            // Log-uniform grid over 1e-9 .. 1e9.
            let x = 10f64.powf(-9.0 + 18.0 * k as f64 / steps as f64);
            let v = s.value(s.index(x));
            let err = (v - x).abs() / x;
            assert!(err <= alpha * (1.0 + ROUNDING), "x={x} v={v} err={err}");
            worst = worst.max(err);
        }
        assert!(
            worst >= 0.999 * alpha,
            "alpha={alpha}: bound not tight, worst {worst}"
        );
    }
}

#[test]
fn accuracy_uniform() {
    let mut rng = SimRng::derive(11, 1);
    let xs: Vec<f64> = (0..N).map(|_| rng.uniform_range(1.0, 1000.0)).collect();
    check_against_exact(xs, DEFAULT_ALPHA);
}

#[test]
fn accuracy_exponential() {
    let mut rng = SimRng::derive(11, 2);
    let xs: Vec<f64> = (0..N).map(|_| rng.exponential(2.5e6)).collect();
    check_against_exact(xs, DEFAULT_ALPHA);
}

#[test]
fn accuracy_pareto_shape_1_5() {
    let mut rng = SimRng::derive(11, 3);
    let xs: Vec<f64> = (0..N)
        .map(|_| 1000.0 * (1.0 - rng.uniform()).powf(-1.0 / 1.5))
        .collect();
    check_against_exact(xs, DEFAULT_ALPHA);
}

#[test]
fn accuracy_lognormal() {
    let mut rng = SimRng::derive(11, 4);
    let xs: Vec<f64> = (0..N)
        .map(|_| (10.0 + 2.0 * standard_normal(&mut rng)).exp())
        .collect();
    check_against_exact(xs, DEFAULT_ALPHA);
}

/// With a looser α the same data shows errors above 1 %: the assertion in
/// `check_against_exact` is what would fire if the sketch's α were set wrong.
#[test]
fn wrong_alpha_would_be_detected() {
    let mut rng = SimRng::derive(11, 5);
    let mut xs: Vec<f64> = (0..N).map(|_| rng.exponential(1.0)).collect();
    let mut s = QuantileSketch::new(0.05);
    for &x in &xs {
        s.add(x);
    }
    xs.sort_by(f64::total_cmp);
    let worst = QS
        .iter()
        .map(|&q| {
            let exact = xs[QuantileSketch::rank(q, N as u64) as usize];
            (s.quantile(q) - exact).abs() / exact
        })
        .fold(0.0, f64::max);
    assert!(worst > DEFAULT_ALPHA, "worst {worst}");
    assert!(worst <= 0.05 * (1.0 + ROUNDING));
}

#[test]
fn merge_of_halves_equals_whole() {
    let mut rng = SimRng::derive(12, 1);
    let xs: Vec<f64> = (0..200_000)
        .map(|k| {
            if k % 97 == 0 {
                0.0
            } else {
                rng.exponential(1e4) * if k % 2 == 0 { 1e-3 } else { 1.0 }
            }
        })
        .collect();
    let mut whole = QuantileSketch::new(DEFAULT_ALPHA);
    let mut a = QuantileSketch::new(DEFAULT_ALPHA);
    let mut b = QuantileSketch::new(DEFAULT_ALPHA);
    for (k, &x) in xs.iter().enumerate() {
        whole.add(x);
        if k < xs.len() / 2 {
            a.add(x);
        } else {
            b.add(x);
        }
    }
    a.merge(&b);
    assert_eq!(a.count(), whole.count());
    assert_eq!(a.zero_count(), whole.zero_count());
    assert_eq!(a.min(), whole.min());
    assert_eq!(a.max(), whole.max());
    assert!((a.mean() - whole.mean()).abs() <= 1e-12 * whole.mean());
    // Same buckets, not just close answers.
    assert_eq!(a.offset, whole.offset);
    assert_eq!(a.counts, whole.counts);
    for k in 0..=1000 {
        let q = k as f64 / 1000.0;
        assert_eq!(a.quantile(q), whole.quantile(q), "q={q}");
    }
    // Merging into an empty sketch, and merging an empty one, changes nothing.
    let mut e = QuantileSketch::new(DEFAULT_ALPHA);
    e.merge(&whole);
    assert_eq!(e.counts, whole.counts);
    e.merge(&QuantileSketch::new(DEFAULT_ALPHA));
    assert_eq!(e.count(), whole.count());
}

#[test]
#[should_panic(expected = "alpha differs")]
fn merge_requires_same_alpha() {
    let mut a = QuantileSketch::new(0.01);
    a.merge(&QuantileSketch::new(0.02));
}

#[test]
fn memory_bounded_over_1e_minus_9_to_1e6() {
    let mut rng = SimRng::derive(13, 1);
    let mut s = QuantileSketch::new(DEFAULT_ALPHA);
    let mut xs = Vec::with_capacity(N);
    for _ in 0..N {
        let x = 10f64.powf(rng.uniform_range(-9.0, 6.0));
        xs.push(x);
        s.add(x);
    }
    // ln(1e15)/ln(1.0202...) ≈ 1727 buckets: under the cap, nothing collapsed.
    assert!(s.bucket_count() <= DEFAULT_MAX_BUCKETS);
    assert!(s.bucket_count() > 1700, "{}", s.bucket_count());
    assert!(s.bytes() <= DEFAULT_MAX_BUCKETS * 8, "{}", s.bytes());
    assert_eq!(s.collapsed_below(), None);
    xs.sort_by(f64::total_cmp);
    for q in QS {
        let exact = xs[QuantileSketch::rank(q, N as u64) as usize];
        let err = (s.quantile(q) - exact).abs() / exact;
        assert!(err <= DEFAULT_ALPHA * (1.0 + ROUNDING), "q={q} err={err}");
    }
    // Steady state: values inside the range seen so far allocate nothing.
    let bytes = s.bytes();
    for _ in 0..10_000 {
        s.add(10f64.powf(rng.uniform_range(-8.0, 5.0)));
    }
    assert_eq!(s.bytes(), bytes);
}

/// A range far wider than the cap: the lowest buckets collapse, the bucket count stays at
/// the cap, and quantiles above the collapsed range keep the bound.
#[test]
fn collapse_keeps_cap_and_upper_quantiles() {
    for descending in [false, true] {
        let mut rng = SimRng::derive(13, 2);
        let mut xs: Vec<f64> = (0..N)
            .map(|_| 10f64.powf(rng.uniform_range(-30.0, 30.0)))
            .collect();
        if descending {
            // Exercise the low-end growth path: ever smaller values.
            xs.sort_by(|a, b| b.total_cmp(a));
        }
        let mut s = QuantileSketch::new(DEFAULT_ALPHA);
        for &x in &xs {
            s.add(x);
        }
        assert_eq!(s.bucket_count(), DEFAULT_MAX_BUCKETS);
        assert!(s.bytes() <= DEFAULT_MAX_BUCKETS * 8);
        let bound = s.collapsed_below().expect("must have collapsed");
        xs.sort_by(f64::total_cmp);
        assert_eq!(s.quantile(0.0), xs[0]);
        assert_eq!(s.quantile(1.0), xs[N - 1]);
        let mut checked = 0;
        for k in 1..1000 {
            let q = k as f64 / 1000.0;
            let exact = xs[QuantileSketch::rank(q, N as u64) as usize];
            if exact > bound {
                let err = (s.quantile(q) - exact).abs() / exact;
                assert!(err <= DEFAULT_ALPHA * (1.0 + ROUNDING), "q={q} err={err}");
                checked += 1;
            }
        }
        // 2048 buckets cover ~17.8 of the 60 decades: the top ~30 % of ranks.
        assert!(checked > 250, "{checked}");
    }
}

#[test]
fn small_cap_collapse_counts_are_conserved() {
    // 64 buckets span a factor 1.0202^64 ≈ 3.6; the values span 1.5^198.
    let mut s = QuantileSketch::with_max_buckets(DEFAULT_ALPHA, 64);
    let mut xs = Vec::new();
    for k in 0..100 {
        xs.push(1.5f64.powi(k)); // ascending: high-end collapses
    }
    for k in 1..100 {
        xs.push(1.5f64.powi(-k)); // descending: low-end catch-all
    }
    for &x in &xs {
        s.add(x);
    }
    assert_eq!(s.bucket_count(), 64);
    assert_eq!(s.counts.iter().sum::<u64>(), xs.len() as u64);
    assert_eq!(s.count(), xs.len() as u64);
    let bound = s.collapsed_below().unwrap();
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as u64;
    let mut checked = 0;
    for r in 0..n {
        // A q whose rank is exactly r: (r + 0.5)/(n − 1), kept below 1.
        let q = ((r as f64 + 0.5) / (n - 1) as f64).min(1.0 - 1e-12);
        assert_eq!(QuantileSketch::rank(q, n), r.min(n - 2));
        let exact = xs[QuantileSketch::rank(q, n) as usize];
        if exact > bound {
            let err = (s.quantile(q) - exact).abs() / exact;
            assert!(err <= DEFAULT_ALPHA * (1.0 + ROUNDING), "r={r} err={err}");
            checked += 1;
        }
    }
    // 1.5^97 and 1.5^98 lie within a factor 3.6 of the top (1.5^99, returned at q = 1).
    assert!(checked >= 2, "{checked}");
    // (Compared with the stored values: `powi` may round differently when folded.)
    assert_eq!(s.quantile(1.0), xs[xs.len() - 1]);
    assert_eq!(s.quantile(0.0), xs[0]);
}

#[test]
fn empty_sketch_is_nan() {
    let s = QuantileSketch::new(DEFAULT_ALPHA);
    assert!(s.is_empty());
    assert_eq!(s.count(), 0);
    for q in [0.0, 0.5, 1.0] {
        assert!(s.quantile(q).is_nan());
    }
    assert!(s.mean().is_nan());
    assert!(s.min().is_nan());
    assert!(s.max().is_nan());
    assert_eq!(s.bytes(), 0);
}

#[test]
fn zeros_invalid_values_and_add_n() {
    let mut s = QuantileSketch::new(DEFAULT_ALPHA);
    s.add_n(0.0, 6);
    s.add(f64::NAN);
    s.add(-1.0);
    s.add(f64::INFINITY);
    s.add_n(5.0, 4);
    assert_eq!(s.count(), 10);
    assert_eq!(s.ignored(), 3);
    assert_eq!(s.zero_count(), 6);
    assert_eq!(s.quantile(0.5), 0.0); // rank ⌊4.5⌋ = 4 < 6 zeros
    assert_eq!(s.quantile(0.6), 0.0); // rank ⌊5.4⌋ = 5: the last zero
    assert_eq!(s.quantile(0.7), 5.0); // rank ⌊6.3⌋ = 6: clamped to the exact max
    assert_eq!(s.mean(), 2.0);
    assert!(s.quantile(1.5).is_nan());
    assert!(s.quantile(f64::NAN).is_nan());

    let mut a = QuantileSketch::new(DEFAULT_ALPHA);
    let mut b = QuantileSketch::new(DEFAULT_ALPHA);
    for x in [3.0, 7.0, 3.0, 1e5, 3.0] {
        b.add(x);
    }
    a.add_n(3.0, 3);
    a.add(7.0);
    a.add(1e5);
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.offset, b.offset);
}

#[test]
fn single_value_is_exact() {
    let mut s = QuantileSketch::new(DEFAULT_ALPHA);
    s.add(123.456);
    for q in [0.0, 0.3, 0.5, 0.99, 1.0] {
        assert_eq!(s.quantile(q), 123.456);
    }
}
