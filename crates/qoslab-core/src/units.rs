//! Units: simulated time is an integer count of nanoseconds, rates are bits per second,
//! sizes are bytes. The parsers accept the human-readable forms used in scenario files
//! (`"26ms"`, `"1.2Mbps"`, `"64KB"`, `"100pkts"`). Decimal prefixes are powers of 1000
//! (as in networking: 1 Mbps = 10^6 bit/s, 1 KB = 1000 B); `KiB`/`MiB` are powers of 1024.

/// Simulated time in nanoseconds since the start of the run.
pub type SimTime = u64;
/// A span of simulated time in nanoseconds.
pub type Dur = u64;

pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Converts nanoseconds to seconds (for reporting only; never used for event times).
pub fn secs(t: u64) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// Converts seconds to nanoseconds, rounding to the nearest nanosecond.
#[inline]
pub fn from_secs(s: f64) -> u64 {
    round_u64(s * NS_PER_SEC as f64)
}

/// `x.round() as u64` (halves away from zero; negative numbers and NaN give 0; saturating)
/// without the library call `f64::round` is on the baseline x86-64 (every retransmission
/// timer is set through it): the cast truncates, and below 2^52 the fraction it leaves is
/// exact to subtract (above, every `f64` is whole).
#[inline]
pub fn round_u64(x: f64) -> u64 {
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// Time to serialise `bytes` at `bps`, rounded up to whole nanoseconds.
pub fn tx_time(bytes: u64, bps: u64) -> Dur {
    ceil_div(bytes as u128 * 8 * NS_PER_SEC as u128, bps as u128) as u64
}

pub fn ceil_div(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

/// A queue's capacity: in packets or in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Packets(n) => write!(f, "{n} packets"),
            Limit::Bytes(n) => write!(f, "{n} bytes"),
        }
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "e" may start a unit only if it is not an exponent; none of our units start with e.
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

/// The longest duration a scenario may give: 2^53 ns (about 104 days of simulated time), so
/// that every time is exact as an f64 and sums of times cannot overflow.
pub const MAX_DURATION_NS: u64 = 1 << 53;
/// The fastest rate: 10 Tbit/s.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// The largest size: 2^40 bytes (1 TiB).
pub const MAX_BYTES: u64 = 1 << 40;
/// The largest queue limit in packets: 2^32.
pub const MAX_PACKETS: u64 = 1 << 32;

/// `v` (already in the base unit) if it is at most `max`, else an error naming the limit.
fn at_most(v: f64, max: u64, what: &str, s: &str, limit: &str) -> Result<u64, String> {
    if v > max as f64 {
        return Err(format!("{what} {s:?} is too large: at most {limit}"));
    }
    Ok(v.round() as u64)
}

fn check_value(v: f64, what: &str, s: &str) -> Result<f64, String> {
    if !v.is_finite() {
        return Err(format!("{what} {s:?} is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("{what} {s:?} is negative"));
    }
    Ok(v)
}

/// Parses a duration such as `"26ms"`, `"1.5s"`, `"200us"`, `"10ns"`, `"2min"`.
pub fn parse_duration(s: &str) -> Result<Dur, String> {
    let expected = "expected a duration such as \"26ms\" or \"1.5s\" (units: ns, us, ms, s, min)";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?}: {expected}"))?;
    let v = check_value(v, "duration", s)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" => return Err(format!("{s:?} has no unit: {expected}")),
        u => return Err(format!("unknown time unit {u:?} in {s:?}: {expected}")),
    };
    at_most(
        v * mult,
        MAX_DURATION_NS,
        "duration",
        s,
        "2^53 ns (about 104 days)",
    )
}

/// The spellings of a rate's unit, for errors and the schema's reference.
pub const RATE_UNITS: &str = "bps, b/s, bit/s or bits/s, after an optional prefix k, M, G or T \
     in either case (250kbps, 1.2Mbit/s, 10gbps)";

/// The factor of a rate unit: an optional decimal prefix (`k`, `M`, `G`, `T`, either case: no
/// rate is ever given in millibits) and one of `bps`, `b/s`, `bit/s`, `bits/s`. The `b` stays
/// lower case: `MB/s` and `MBps` are bytes in common use, and are refused rather than misread.
fn rate_mult(unit: &str) -> Option<f64> {
    let (mult, rest) = match unit.chars().next()? {
        'k' | 'K' => (1e3, &unit[1..]),
        'm' | 'M' => (1e6, &unit[1..]),
        'g' | 'G' => (1e9, &unit[1..]),
        't' | 'T' => (1e12, &unit[1..]),
        _ => (1.0, unit),
    };
    matches!(rest, "bps" | "b/s" | "bit/s" | "bits/s").then_some(mult)
}

/// Parses a bit rate such as `"1.2Mbps"`, `"64kbps"`, `"10Gbit/s"`, `"500bps"`, `"1mbps"`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let expected = format!("expected a rate such as \"1.2Mbps\" (units: {RATE_UNITS})");
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?}: {expected}"))?;
    let v = check_value(v, "rate", s)?;
    let mult = match rate_mult(unit) {
        Some(m) => m,
        None if unit.is_empty() => return Err(format!("{s:?} has no unit: {expected}")),
        None => return Err(format!("unknown rate unit {unit:?} in {s:?}: {expected}")),
    };
    at_most(v * mult, MAX_RATE_BPS, "rate", s, "10 Tbps")
}

fn byte_mult(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" | "bytes" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Parses a size in bytes such as `"500B"`, `"64KB"`, `"1MiB"`.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let expected = "expected a size such as \"500B\" or \"64KB\" (units: B, KB, MB, GB, KiB, MiB)";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?}: {expected}"))?;
    let v = check_value(v, "size", s)?;
    match byte_mult(unit) {
        Some(m) => at_most(v * m, MAX_BYTES, "size", s, "2^40 bytes (1 TiB)"),
        None if unit.is_empty() => Err(format!("{s:?} has no unit: {expected}")),
        None => Err(format!("unknown size unit {unit:?} in {s:?}: {expected}")),
    }
}

/// Parses a queue limit: `"100pkts"` (packets) or a byte size such as `"64KB"`.
pub fn parse_limit(s: &str) -> Result<Limit, String> {
    let expected = "expected a queue limit such as \"100pkts\" or \"64KB\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?}: {expected}"))?;
    let v = check_value(v, "limit", s)?;
    match unit {
        "pkts" | "pkt" | "packets" => {
            if v.fract() != 0.0 {
                return Err(format!("{s:?}: a packet count must be a whole number"));
            }
            Ok(Limit::Packets(at_most(
                v,
                MAX_PACKETS,
                "limit",
                s,
                "2^32 packets",
            )?))
        }
        "" => Err(format!("{s:?} has no unit: {expected}")),
        u => match byte_mult(u) {
            Some(m) => Ok(Limit::Bytes(at_most(
                v * m,
                MAX_BYTES,
                "limit",
                s,
                "2^40 bytes (1 TiB)",
            )?)),
            None => Err(format!("unknown limit unit {u:?} in {s:?}: {expected}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same as the library's rounding for every `f64`: any bit pattern, whole numbers
        /// and halves, both sides of 2^52, 2^53 and 2^64.
        #[test]
        fn round_u64_is_the_library_rounding(
            x in prop_oneof![
                any::<u64>().prop_map(f64::from_bits),
                (0u64..1 << 54).prop_map(|n| n as f64 / 2.0),
                -1e20f64..1e20,
                (0u64..1 << 20).prop_map(|k| (1u64 << 52) as f64 + k as f64 / 4.0),
                (0u64..1 << 20).prop_map(|k| 18_446_744_073_709_551_616.0 - k as f64 * 2048.0),
            ],
        ) {
            prop_assert_eq!(round_u64(x), x.round() as u64, "{}", x);
        }
    }

    #[test]
    fn round_u64_at_the_edges() {
        for x in [
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.5,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.8446744073709552e19,
            4.5e15 + 0.5,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(round_u64(x), x.round() as u64, "{x}");
        }
    }

    #[test]
    fn values_beyond_the_limits_are_errors_naming_the_limit() {
        for (r, needle) in [
            (parse_duration("1e12s"), "104 days"),
            (parse_duration("1e300min"), "104 days"),
            (parse_rate("1e19bps"), "10 Tbps"),
            (parse_rate("20000Gbps"), "10 Tbps"),
            (parse_bytes("2e12B"), "1 TiB"),
            (
                parse_limit("9223372036854775807pkts").map(|_| 0),
                "2^32 packets",
            ),
            (parse_limit("1e13B").map(|_| 0), "1 TiB"),
        ] {
            let e = r.expect_err(needle);
            assert!(e.contains("too large") && e.contains(needle), "{e}");
        }
        assert!(parse_duration("104days").is_err());
        assert_eq!(parse_duration("8000000s").unwrap(), 8_000_000 * NS_PER_SEC);
        assert_eq!(parse_rate("10Tbps").unwrap(), MAX_RATE_BPS);
        assert!(parse_rate("10.001Tbps").unwrap_err().contains("10 Tbps"));
        assert_eq!(parse_rate("10000Gbps").unwrap(), MAX_RATE_BPS);
        assert_eq!(
            parse_limit("4294967296pkts").unwrap(),
            Limit::Packets(MAX_PACKETS)
        );
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("26ms").unwrap(), 26_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("0s").unwrap(), 0);
        assert_eq!(parse_rate("1.2Mbps").unwrap(), 1_200_000);
        assert_eq!(parse_rate("250kbps").unwrap(), 250_000);
        assert_eq!(parse_bytes("64KB").unwrap(), 64_000);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert_eq!(parse_limit("100pkts").unwrap(), Limit::Packets(100));
        assert_eq!(parse_limit("64KB").unwrap(), Limit::Bytes(64_000));
    }

    #[test]
    fn rejects_bad_units() {
        assert!(parse_duration("26").unwrap_err().contains("no unit"));
        assert!(parse_duration("26 parsecs")
            .unwrap_err()
            .contains("unknown time unit"));
        assert!(parse_rate("-1Mbps").unwrap_err().contains("negative"));
        assert!(parse_rate("1.2Mbits")
            .unwrap_err()
            .contains("unknown rate unit"));
        assert!(parse_limit("1.5pkts").is_err());
    }

    #[test]
    fn one_rate_grammar_with_prefixes_in_either_case() {
        for (text, bps) in [
            ("1Mbit/s", 1_000_000),
            ("1Mb/s", 1_000_000),
            ("1mbps", 1_000_000),
            ("1 MBIT/S".to_lowercase().as_str(), 1_000_000),
            ("2.5Gbits/s", 2_500_000_000),
            ("64Kbit/s", 64_000),
            ("500bit/s", 500),
            ("1Tbps", 1_000_000_000_000),
        ] {
            assert_eq!(parse_rate(text), Ok(bps), "{text}");
        }
        // Bytes per second are refused, not read as bits; the error lists every spelling.
        for text in ["1MB/s", "1MBps", "1Mbyte/s", "1Mibps"] {
            let err = parse_rate(text).unwrap_err();
            assert!(
                err.contains("unknown rate unit") && err.contains(RATE_UNITS),
                "{err}"
            );
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        assert_eq!(tx_time(500, 1_000_000), 4_000_000);
        assert_eq!(tx_time(1, 3), 2_666_666_667);
    }
}
