//! Flow-size distributions for flow-arrival processes.
//!
//! References:
//! * Pareto: `x = x_m·U^(−1/a)` by inverse transform; mean `a·x_m/(a−1)` for `a > 1`, median
//!   `x_m·2^(1/a)` (e.g. N. L. Johnson, S. Kotz, N. Balakrishnan, *Continuous Univariate
//!   Distributions*, vol. 1, 2nd ed., Wiley 1994, ch. 20).
//! * Lognormal: `exp(μ + σZ)`, mean `exp(μ + σ²/2)` (same, ch. 14); the standard normal `Z` by
//!   the Box–Muller transform (G. E. P. Box, M. E. Muller, "A Note on the Generation of Random
//!   Normal Deviates", Ann. Math. Statist. 29(2), 1958).
//! * Empirical CDFs: inverse-transform sampling with linear interpolation between the tabulated
//!   points, in the manner of ns-2's `RandomVariable/Empirical` with continuous interpolation,
//!   which the pFabric simulations use to read their flow-size files. Built-in tables (see `src/traffic/cdf/*.cdf` for the
//!   exact provenance):
//!   - `"websearch"`: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4, as
//!     tabulated for pFabric (Alizadeh et al., SIGCOMM 2013) — `CDF_dctcp.tcl` in
//!     github.com/HKUST-SING/PIAS-NS2; mean 1 665 830.8 bytes;
//!   - `"datamining"`: A. Greenberg et al., "VL2", SIGCOMM 2009, Fig. 2, as tabulated in the
//!     same literature — `CDF_vl2.tcl` in github.com/HKUST-SING/PIAS-NS2; mean 7 470 236 bytes.
//!
//!   Both source tables are in packets of 1460 bytes; the files here are converted to bytes.
//!
//! Every sample is a whole number of bytes, at least 1: continuous draws are rounded to the
//! nearest integer and clamped to `[1, 2^40]` (1 TiB, the largest size a scenario takes). [`SizeDist::mean`] is the analytic mean of
//! the continuous distribution (the rounding shifts the sample mean by less than a byte for the
//! sizes of interest).

use crate::rng::SimRng;
use std::fmt;

/// An invalid parameter for a [`SizeDist`] constructor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SizeParamError(pub String);

/// A flow-size distribution, in bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeDist {
    /// Always this many bytes (0 is sampled as 1).
    Fixed(u64),
    /// Exponential with this mean, bytes.
    Exponential { mean: f64 },
    /// Pareto with tail index `shape` and minimum `scale` (x_m), bytes.
    Pareto { shape: f64, scale: f64 },
    /// `exp(mu + sigma·Z)` bytes with `Z` standard normal.
    Lognormal { mu: f64, sigma: f64 },
    /// A tabulated CDF, linearly interpolated.
    Empirical(EmpiricalCdf),
}

impl SizeDist {
    /// Pareto with the given mean (bytes) and shape: `x_m = mean·(shape−1)/shape`.
    pub fn pareto_from_mean(mean: f64, shape: f64) -> Result<SizeDist, SizeParamError> {
        if !(shape > 1.0 && shape.is_finite()) {
            return Err(SizeParamError(format!(
                "Pareto shape must be a finite number > 1 for the mean to exist, got {shape}"
            )));
        }
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(SizeParamError(format!(
                "Pareto mean must be a positive finite number, got {mean}"
            )));
        }
        Ok(SizeDist::Pareto {
            shape,
            scale: mean * (shape - 1.0) / shape,
        })
    }

    /// Lognormal with the given mean (bytes) and σ: `mu = ln(mean) − σ²/2`.
    pub fn lognormal_from_mean(mean: f64, sigma: f64) -> Result<SizeDist, SizeParamError> {
        if !(mean > 0.0 && mean.is_finite()) {
            return Err(SizeParamError(format!(
                "lognormal mean must be a positive finite number, got {mean}"
            )));
        }
        if !(sigma >= 0.0 && sigma.is_finite()) {
            return Err(SizeParamError(format!(
                "lognormal sigma must be a finite number >= 0, got {sigma}"
            )));
        }
        Ok(SizeDist::Lognormal {
            mu: mean.ln() - sigma * sigma / 2.0,
            sigma,
        })
    }

    /// One flow size in bytes, at least 1.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match self {
            SizeDist::Fixed(n) => (*n).max(1),
            SizeDist::Exponential { mean } => to_bytes(rng.exponential(*mean)),
            SizeDist::Pareto { shape, scale } => {
                // 1 - u lies in (0, 1], so the power is finite.
                to_bytes(scale * (1.0 - rng.uniform()).powf(-1.0 / shape))
            }
            SizeDist::Lognormal { mu, sigma } => {
                to_bytes((mu + sigma * standard_normal(rng)).exp())
            }
            SizeDist::Empirical(cdf) => to_bytes(cdf.sample(rng)),
        }
    }

    /// A one-line description for reports, e.g. `pareto(mean=100000B, shape=1.2)`,
    /// `empirical(websearch, mean=1665831B)`.
    pub fn describe(&self) -> String {
        let mean = self.mean();
        match self {
            SizeDist::Fixed(n) => format!("fixed({n}B)"),
            SizeDist::Exponential { .. } => format!("exponential(mean={mean:.0}B)"),
            SizeDist::Pareto { shape, .. } => format!("pareto(mean={mean:.0}B, shape={shape})"),
            SizeDist::Lognormal { sigma, .. } => {
                format!("lognormal(mean={mean:.0}B, sigma={sigma})")
            }
            SizeDist::Empirical(cdf) => match cdf.name() {
                Some(name) => format!("empirical({name}, mean={mean:.0}B)"),
                None => format!("empirical({} points, mean={mean:.0}B)", cdf.points().len()),
            },
        }
    }

    /// Analytic mean in bytes (infinite for a Pareto shape ≤ 1).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(n) => *n as f64,
            SizeDist::Exponential { mean } => *mean,
            SizeDist::Pareto { shape, scale } => {
                if *shape > 1.0 {
                    shape * scale / (shape - 1.0)
                } else {
                    f64::INFINITY
                }
            }
            SizeDist::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            SizeDist::Empirical(cdf) => cdf.mean(),
        }
    }
}

/// Rounds a continuous draw to whole bytes, at least 1 (NaN also gives 1) and at most 2^40
/// (the largest size a scenario takes: a heavy tail's rare draw beyond it is that size).
fn to_bytes(x: f64) -> u64 {
    if x >= crate::units::MAX_BYTES as f64 {
        crate::units::MAX_BYTES
    } else if x >= 1.5 {
        crate::units::round_u64(x)
    } else {
        1
    }
}

/// A standard normal deviate by the Box–Muller transform (one of the pair is used, so
/// sampling needs no state beyond the random stream).
pub fn standard_normal(rng: &mut SimRng) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - rng.uniform();
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// An error in an empirical CDF table, with the 1-based line it refers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CdfError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for CdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

fn cdf_err(line: usize, message: String) -> CdfError {
    CdfError { line, message }
}

/// A tabulated cumulative distribution of flow sizes: points `(size_bytes, P[X ≤ size])` with
/// strictly increasing sizes, non-decreasing probabilities and a last probability of 1.
///
/// Text form: one `size_bytes cumulative_probability` pair per line, separated by whitespace
/// or one comma; `#` starts a comment (whole-line or trailing); blank lines are skipped.
///
/// As a distribution: probability `p_0` sits at the first size `x_0` (a draw `u < p_0` returns
/// `x_0`), and between consecutive points the CDF is linear, i.e. sizes are uniform on
/// `(x_{k−1}, x_k]` with probability `p_k − p_{k−1}`.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalCdf {
    points: Vec<(f64, f64)>,
    /// The built-in table's name, if it is one.
    name: Option<&'static str>,
}

/// Names accepted by [`EmpiricalCdf::builtin`].
pub fn builtin_names() -> &'static [&'static str] {
    &["websearch", "datamining"]
}

const WEBSEARCH: &str = include_str!("cdf/websearch.cdf");
const DATAMINING: &str = include_str!("cdf/datamining.cdf");

/// Tolerance on the last probability being 1 (for tables written with rounded decimals).
const LAST_PROBABILITY_TOLERANCE: f64 = 1e-9;

impl EmpiricalCdf {
    /// Parses and validates the text form; errors name the 1-based line.
    pub fn parse(text: &str) -> Result<EmpiricalCdf, CdfError> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut last_point_line = 0;
        let mut lines_seen = 0;
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            lines_seen = line;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let fields: Vec<&str> = if content.contains(',') {
                content.split(',').map(str::trim).collect()
            } else {
                content.split_whitespace().collect()
            };
            if fields.len() != 2 || fields.iter().any(|f| f.is_empty()) {
                return Err(cdf_err(
                    line,
                    format!(
                        "expected two fields `size_bytes cumulative_probability`, got {}",
                        fields.iter().filter(|f| !f.is_empty()).count()
                    ),
                ));
            }
            let number = |s: &str, what: &str| -> Result<f64, CdfError> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(cdf_err(line, format!("the {what} is not a finite number"))),
                }
            };
            let size = number(fields[0], "size")?;
            let p = number(fields[1], "probability")?;
            if size < 0.0 {
                return Err(cdf_err(line, "the size is negative".to_string()));
            }
            if size > crate::units::MAX_BYTES as f64 {
                return Err(cdf_err(
                    line,
                    format!(
                        "the size {size} is too large: at most 2^40 bytes (1 TiB), the largest \
                         size a scenario takes"
                    ),
                ));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(cdf_err(
                    line,
                    "the probability is outside [0, 1]".to_string(),
                ));
            }
            if let Some(&(prev_size, prev_p)) = points.last() {
                if size <= prev_size {
                    return Err(cdf_err(
                        line,
                        format!(
                            "the size is not greater than the previous size \
                             (line {last_point_line}); sizes must increase"
                        ),
                    ));
                }
                if p < prev_p {
                    return Err(cdf_err(
                        line,
                        format!(
                            "the probability is less than the previous probability \
                             (line {last_point_line}); probabilities must not decrease"
                        ),
                    ));
                }
            }
            points.push((size, p));
            last_point_line = line;
        }
        if points.len() < 2 {
            // Reported at the last data line, or at the end of the input if there is none.
            let line = if last_point_line > 0 {
                last_point_line
            } else {
                lines_seen.max(1)
            };
            return Err(cdf_err(
                line,
                format!("a CDF needs at least two points, found {}", points.len()),
            ));
        }
        let last = points.len() - 1;
        let p_last = points[last].1;
        if (p_last - 1.0).abs() > LAST_PROBABILITY_TOLERANCE {
            return Err(cdf_err(
                last_point_line,
                "the last cumulative probability must be 1".to_string(),
            ));
        }
        points[last].1 = 1.0;
        Ok(EmpiricalCdf { points, name: None })
    }

    /// A built-in table by name (see [`builtin_names`]), in bytes.
    pub fn builtin(name: &str) -> Option<EmpiricalCdf> {
        let (name, text) = match name {
            "websearch" => ("websearch", WEBSEARCH),
            "datamining" => ("datamining", DATAMINING),
            _ => return None,
        };
        let mut cdf = EmpiricalCdf::parse(text).expect("built-in CDF tables are valid");
        cdf.name = Some(name);
        Some(cdf)
    }

    /// The built-in table's name (`None` for a parsed table).
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// The validated points `(size_bytes, cumulative_probability)`.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Inverse CDF with linear interpolation, for `u` in `[0, 1]`.
    pub fn inverse(&self, u: f64) -> f64 {
        let pts = &self.points;
        // First point whose probability exceeds u; u < 1 = last probability keeps k in range.
        let k = pts.partition_point(|&(_, p)| p <= u);
        if k == 0 {
            return pts[0].0;
        }
        if k >= pts.len() {
            return pts[pts.len() - 1].0;
        }
        let (x0, p0) = pts[k - 1];
        let (x1, p1) = pts[k];
        x0 + (u - p0) / (p1 - p0) * (x1 - x0)
    }

    /// One size in bytes (not rounded).
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        self.inverse(rng.uniform())
    }

    /// Mean of the interpolated distribution: `p_0·x_0 + Σ (p_k − p_{k−1})·(x_{k−1} + x_k)/2`.
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].1 * pts[0].0;
        for w in pts.windows(2) {
            let ((x0, p0), (x1, p1)) = (w[0], w[1]);
            m += (p1 - p0) * (x0 + x1) / 2.0;
        }
        m
    }

    /// Second moment `E[X²]` of the interpolated distribution (a uniform on `[a, b]` has
    /// `E[X²] = (a² + ab + b²)/3`).
    pub fn second_moment(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].1 * pts[0].0 * pts[0].0;
        for w in pts.windows(2) {
            let ((a, p0), (b, p1)) = (w[0], w[1]);
            m += (p1 - p0) * (a * a + a * b + b * b) / 3.0;
        }
        m
    }
}

impl std::str::FromStr for EmpiricalCdf {
    type Err = CdfError;
    fn from_str(s: &str) -> Result<Self, CdfError> {
        EmpiricalCdf::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 1_000_000;

    fn draws(d: &SizeDist, seed: u64) -> Vec<u64> {
        let mut rng = SimRng::derive(seed, crate::rng::stream::FLOW_TRAFFIC | 77);
        (0..N).map(|_| d.sample(&mut rng)).collect()
    }

    fn sample_mean(xs: &[u64]) -> f64 {
        xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64
    }

    /// Checks |sample mean − mean| ≤ 5 standard errors (sd/√N) + 1 byte of rounding. With a
    /// fixed seed the test is deterministic; 5 SE would be exceeded by chance with
    /// probability below 1e-6 for any seed.
    fn assert_mean_within(d: &SizeDist, sd: f64, seed: u64) {
        let xs = draws(d, seed);
        let m = sample_mean(&xs);
        let tol = 5.0 * sd / (N as f64).sqrt() + 1.0;
        assert!(
            (m - d.mean()).abs() <= tol,
            "{d:?}: sample mean {m}, analytic {}, tolerance {tol}",
            d.mean()
        );
    }

    #[test]
    fn fixed_is_constant_and_at_least_one() {
        let mut rng = SimRng::derive(1, 1);
        assert!((0..1000).all(|_| SizeDist::Fixed(1500).sample(&mut rng) == 1500));
        assert_eq!(SizeDist::Fixed(0).sample(&mut rng), 1);
        assert_eq!(SizeDist::Fixed(1500).mean(), 1500.0);
    }

    #[test]
    fn exponential_mean() {
        // sd = mean.
        let d = SizeDist::Exponential { mean: 100_000.0 };
        assert_mean_within(&d, 100_000.0, 2);
    }

    #[test]
    fn lognormal_mean() {
        // sd = mean·sqrt(e^{σ²} − 1).
        let d = SizeDist::lognormal_from_mean(100_000.0, 1.0).unwrap();
        assert!((d.mean() - 100_000.0).abs() < 1e-6);
        let sd = 100_000.0 * (1f64.exp() - 1.0).sqrt();
        assert_mean_within(&d, sd, 3);
    }

    #[test]
    fn standard_normal_moments() {
        let mut rng = SimRng::derive(4, 4);
        let zs: Vec<f64> = (0..N).map(|_| standard_normal(&mut rng)).collect();
        let m = zs.iter().sum::<f64>() / N as f64;
        let v = zs.iter().map(|z| (z - m) * (z - m)).sum::<f64>() / N as f64;
        // SE of the mean 1e-3, of the variance sqrt(2/N) ≈ 1.4e-3: 5 SE.
        assert!(m.abs() < 5e-3, "{m}");
        assert!((v - 1.0).abs() < 7.1e-3, "{v}");
        // P(Z ≤ 1) = 0.841345; SE sqrt(p(1−p)/N) ≈ 3.7e-4.
        let below = zs.iter().filter(|&&z| z <= 1.0).count() as f64 / N as f64;
        assert!((below - 0.841_345).abs() < 2e-3, "{below}");
    }

    /// Shape 1.5 has infinite variance, so the sample mean is not a usable check. Instead:
    /// the Hill estimator of the tail index over the top k = 1 % of samples,
    /// `1/â = (1/k) Σ_{i<k} ln(X_(i)/X_(k))` (descending order), has standard error ≈ a/√k
    /// = 0.015, so ±0.1 is over 6 SE; and the sample median, whose standard error is
    /// `sqrt(0.25/N)/f(m) = m·6.7e-4` (f(m) = a·0.5/m), is within 1 % (15 SE) of x_m·2^(1/a).
    #[test]
    fn pareto_tail_index_and_median() {
        let shape = 1.5;
        let d = SizeDist::pareto_from_mean(100_000.0, shape).unwrap();
        let SizeDist::Pareto { scale, .. } = d else {
            unreachable!()
        };
        assert!((scale - 100_000.0 / 3.0).abs() < 1e-9);
        assert!((d.mean() - 100_000.0).abs() < 1e-9);
        let mut xs = draws(&d, 5);
        xs.sort_unstable_by(|a, b| b.cmp(a));
        let k = N / 100;
        let threshold = xs[k] as f64;
        let hill = xs[..k]
            .iter()
            .map(|&x| (x as f64 / threshold).ln())
            .sum::<f64>()
            / k as f64;
        let tail_index = 1.0 / hill;
        assert!(
            (tail_index - shape).abs() <= 0.1,
            "Hill estimate {tail_index}"
        );
        let median = (xs[N / 2 - 1] as f64 + xs[N / 2] as f64) / 2.0;
        let expected = scale * 2f64.powf(1.0 / shape);
        assert!(
            (median - expected).abs() <= 0.01 * expected,
            "median {median} vs {expected}"
        );
        assert!(xs[N - 1] as f64 >= scale.round());
    }

    #[test]
    fn descriptions() {
        assert_eq!(SizeDist::Fixed(1500).describe(), "fixed(1500B)");
        assert_eq!(
            SizeDist::Exponential { mean: 500.0 }.describe(),
            "exponential(mean=500B)"
        );
        let p = SizeDist::pareto_from_mean(100_000.0, 1.2).unwrap();
        assert_eq!(p.describe(), "pareto(mean=100000B, shape=1.2)");
        let l = SizeDist::lognormal_from_mean(20_000.0, 1.5).unwrap();
        assert_eq!(l.describe(), "lognormal(mean=20000B, sigma=1.5)");
        let ws = SizeDist::Empirical(EmpiricalCdf::builtin("websearch").unwrap());
        assert_eq!(ws.describe(), "empirical(websearch, mean=1665831B)");
        let own = SizeDist::Empirical(EmpiricalCdf::parse("1 0.5\n5 1").unwrap());
        // 0.5·1 + 0.5·(1 + 5)/2 = 2.
        assert_eq!(own.describe(), "empirical(2 points, mean=2B)");
    }

    #[test]
    fn parameter_helpers_reject_bad_input() {
        assert!(SizeDist::pareto_from_mean(1e5, 1.0).is_err());
        assert!(SizeDist::pareto_from_mean(1e5, 0.5).is_err());
        assert!(SizeDist::pareto_from_mean(-1.0, 1.5).is_err());
        assert!(SizeDist::lognormal_from_mean(0.0, 1.0).is_err());
        assert!(SizeDist::lognormal_from_mean(1e5, -1.0).is_err());
        assert_eq!(
            SizeDist::Pareto {
                shape: 0.9,
                scale: 1.0
            }
            .mean(),
            f64::INFINITY
        );
    }

    #[test]
    fn builtin_tables_parse_with_published_means() {
        for name in builtin_names() {
            assert!(EmpiricalCdf::builtin(name).is_some(), "{name}");
        }
        assert!(EmpiricalCdf::builtin("nonesuch").is_none());

        // Web search (DCTCP Fig. 4, pFabric table): 1140.98 packets of 1460 bytes on the
        // piecewise-linear CDF (hand sum: 0.15·6 + 0.05·9.5 + 0.1·16 + 0.1·26 + 0.13·43
        // + 0.07·93 + 0.1·400 + 0.1·1000 + 0.1·2333 + 0.07·5000 + 0.03·13333.5 = 1140.98).
        // The PIAS scripts quote 1138·1460 ≈ 1.66 MB; the brief's "≈ 1.6 MB" agrees.
        let ws = EmpiricalCdf::builtin("websearch").unwrap();
        assert_eq!(ws.points().len(), 11);
        assert!((ws.mean() - 1140.98 * 1460.0).abs() < 1e-3, "{}", ws.mean());
        assert!((1.6e6..1.7e6).contains(&ws.mean()));
        assert_eq!(ws.points()[0], (8760.0, 0.15));
        assert_eq!(ws.points()[10], (29_200_000.0, 1.0));

        // Data mining (VL2 Fig. 2): 5116.6 packets (0.5·1 + 0.1·1.5 + 0.1·2.5 + 0.1·5
        // + 0.1·137 + 0.05·1187 + 0.04·34387 + 0.01·366667 = 5116.6), i.e. 7 470 236 bytes;
        // the PIAS scripts quote 5117·1460 ≈ 7.47 MB.
        let dm = EmpiricalCdf::builtin("datamining").unwrap();
        assert_eq!(dm.points().len(), 8);
        assert!((dm.mean() - 5116.6 * 1460.0).abs() < 1e-3, "{}", dm.mean());
        assert!((7.4e6..7.5e6).contains(&dm.mean()));
        assert_eq!(dm.points()[0], (1460.0, 0.5));
        assert_eq!(dm.points()[7], (973_333_820.0, 1.0));
    }

    /// Sample mean of each built-in table against its analytic mean, with the standard
    /// deviation computed from the table's own second moment.
    #[test]
    fn empirical_sample_means() {
        for (seed, name) in builtin_names().iter().enumerate() {
            let cdf = EmpiricalCdf::builtin(name).unwrap();
            let sd = (cdf.second_moment() - cdf.mean() * cdf.mean()).sqrt();
            assert_mean_within(&SizeDist::Empirical(cdf), sd, 10 + seed as u64);
        }
    }

    #[test]
    fn empirical_inverse_interpolates() {
        let cdf = EmpiricalCdf::parse("100 0.2\n200 0.2\n300 0.6\n1000 1").unwrap();
        assert_eq!(cdf.inverse(0.0), 100.0);
        assert_eq!(cdf.inverse(0.1999), 100.0); // below the first probability
        assert_eq!(cdf.inverse(0.2), 200.0); // the flat step (100, 200] has no mass
        assert_eq!(cdf.inverse(0.4), 250.0);
        assert_eq!(cdf.inverse(0.8), 650.0);
        assert_eq!(cdf.inverse(1.0), 1000.0);
        // 0.2·100 + 0·150 + 0.4·250 + 0.4·650 = 380.
        assert!((cdf.mean() - 380.0).abs() < 1e-9);
    }

    #[test]
    fn parse_accepts_comments_commas_and_blank_lines() {
        let text = "# header\n\n  10, 0.5  # trailing\n\t20\t0.75\n30 ,1.0\n";
        let cdf = EmpiricalCdf::parse(text).unwrap();
        assert_eq!(cdf.points(), &[(10.0, 0.5), (20.0, 0.75), (30.0, 1.0)]);
        let viafromstr: EmpiricalCdf = text.parse().unwrap();
        assert_eq!(viafromstr, cdf);
        // A last probability off by rounding is accepted and set to 1 exactly.
        let cdf = EmpiricalCdf::parse("1 0.5\n2 0.9999999999").unwrap();
        assert_eq!(cdf.points()[1].1, 1.0);
    }

    fn err_line(text: &str) -> (usize, String) {
        let e = EmpiricalCdf::parse(text).unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("line {}: ", e.line)), "{shown}");
        (e.line, e.message)
    }

    #[test]
    fn every_cdf_error_names_its_line() {
        // Non-numeric size and probability (line 3 after a comment and a blank line).
        let (l, m) = err_line("# c\n\nabc 0.5\n2 1");
        assert_eq!(l, 3);
        assert!(m.contains("the size is not") && !m.contains("abc"), "{m}");
        let (l, m) = err_line("1 0.1\n2 x\n3 1");
        assert_eq!(l, 2);
        assert!(
            m.contains("the probability is not") && !m.contains('x'),
            "{m}"
        );
        let (l, _) = err_line("1 0.1\nnan 0.2\n3 1");
        assert_eq!(l, 2);
        // Wrong number of fields.
        let (l, m) = err_line("1 0.1\n2 0.5 7\n3 1");
        assert_eq!(l, 2);
        assert!(m.contains("two fields"), "{m}");
        let (l, _) = err_line("1 0.1\n2,\n3 1");
        assert_eq!(l, 2);
        // Negative size.
        let (l, m) = err_line("-1 0.1\n3 1");
        assert_eq!(l, 1);
        assert!(m.contains("negative"), "{m}");
        // A size above the largest a scenario takes (1 TiB).
        let (l, m) = err_line("100 0\n1e30 1");
        assert_eq!(l, 2);
        assert!(m.contains("at most 2^40 bytes"), "{m}");
        assert!(EmpiricalCdf::parse("100 0\n1099511627776 1").is_ok());
        // Sizes not increasing (equal, then smaller).
        let (l, m) = err_line("1 0.1\n\n5 0.2\n5 0.3\n9 1");
        assert_eq!(l, 4);
        assert!(
            m.contains("sizes must increase") && m.contains("(line 3)"),
            "{m}"
        );
        let (l, _) = err_line("1 0.1\n5 0.2\n4 0.3\n9 1");
        assert_eq!(l, 3);
        // Probabilities decreasing.
        let (l, m) = err_line("1 0.1\n2 0.5\n# note\n3 0.4\n9 1");
        assert_eq!(l, 4);
        assert!(m.contains("must not decrease"), "{m}");
        // Probability outside [0, 1].
        let (l, m) = err_line("1 0.1\n2 1.5\n3 1");
        assert_eq!(l, 2);
        assert!(m.contains("outside [0, 1]"), "{m}");
        let (l, _) = err_line("1 -0.1\n3 1");
        assert_eq!(l, 1);
        // Last probability not 1: reported at the last data line.
        let (l, m) = err_line("1 0.1\n2 0.5\n3 0.9\n# end\n");
        assert_eq!(l, 3);
        assert!(m.contains("must be 1"), "{m}");
        // Too few points: at the only data line, or at the end of an input without any.
        let (l, m) = err_line("# only\n7 1\n");
        assert_eq!(l, 2);
        assert!(m.contains("at least two points"), "{m}");
        let (l, _) = err_line("# nothing\n\n# here\n");
        assert_eq!(l, 3);
        let (l, _) = err_line("");
        assert_eq!(l, 1);
        // Display format.
        let e = CdfError {
            line: 12,
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "line 12: bad");
    }

    #[test]
    fn a_draw_is_whole_bytes_from_1_to_the_largest_size() {
        let max = crate::units::MAX_BYTES;
        assert_eq!(to_bytes(1e30), max);
        assert_eq!(to_bytes(f64::INFINITY), max);
        assert_eq!(to_bytes(max as f64 - 0.4), max);
        assert_eq!(to_bytes(f64::NAN), 1);
        assert_eq!(to_bytes(2.6), 3);
    }
}
