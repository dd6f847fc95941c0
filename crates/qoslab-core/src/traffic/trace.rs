//! Trace-driven sources: a CSV file of `time, size[, flow]` rows replayed open loop, each row a
//! UDP datagram of `size` bytes sent `time` seconds after the flow starts.
//!
//! Format: one row per line, fields separated by commas (spaces around them ignored); `time`
//! in seconds (a decimal number, non-decreasing), `size` in bytes (a whole number 1..=65535),
//! `flow` an optional identifier (a flow of the scenario may take only the rows of one id).
//! Blank lines and lines starting with `#` are skipped, and so is a first line naming the
//! columns (`time,size,flow`). Every malformed line is reported with its number.

use crate::packet::MAX_PACKET_BYTES;
use crate::units::SimTime;

/// What the resolved scenario records of a trace: enough to tell two traces apart.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TraceInfo {
    pub file: String,
    pub flow: Option<String>,
    pub rows: u64,
    pub bytes: u64,
    /// FNV-1a of the file's bytes (hex), so a changed trace changes the scenario's hash.
    pub digest: String,
}

/// One packet of a trace: when (ns after the flow's start) and how large (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRow {
    pub at_ns: SimTime,
    pub size: u32,
}

/// The most rows a trace may hold (16 bytes each in memory: 160 MB).
pub const MAX_ROWS: usize = 10_000_000;
/// The largest trace file read (bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Parses trace text; with `flow`, keeps only the rows whose third field equals it. Errors
/// read "line N: …".
pub fn parse(text: &str, flow: Option<&str>) -> Result<Vec<TraceRow>, String> {
    let mut rows = Vec::new();
    let mut last = 0u64;
    let mut ids_seen = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if n == 0
            && fields
                .first()
                .is_some_and(|f| f.eq_ignore_ascii_case("time"))
        {
            continue;
        }
        let no = n + 1;
        if !(2..=3).contains(&fields.len()) {
            return Err(format!(
                "line {no}: expected `time, size` or `time, size, flow`, got {} fields",
                fields.len()
            ));
        }
        let t: f64 = fields[0]
            .parse()
            .map_err(|_| format!("line {no}: the time is not a number of seconds"))?;
        if !(0.0..=1.0e9).contains(&t) {
            return Err(format!(
                "line {no}: the time is out of range (0 to 1e9 seconds)"
            ));
        }
        let size: u64 = fields[1]
            .parse()
            .map_err(|_| format!("line {no}: the size is not a whole number of bytes"))?;
        if size == 0 || size > u64::from(MAX_PACKET_BYTES) {
            return Err(format!(
                "line {no}: the size is out of range (1 to {MAX_PACKET_BYTES} bytes)"
            ));
        }
        let at_ns = (t * 1e9).round() as u64;
        if at_ns < last {
            return Err(format!(
                "line {no}: the time goes back (the rows must be in time order)"
            ));
        }
        last = at_ns;
        if let Some(id) = fields.get(2) {
            ids_seen = true;
            if flow.is_some_and(|f| f != *id) {
                continue;
            }
        }
        if rows.len() == MAX_ROWS {
            return Err(format!(
                "line {no}: more than {MAX_ROWS} rows (the limit a trace may hold)"
            ));
        }
        rows.push(TraceRow {
            at_ns,
            size: size as u32,
        });
    }
    if let Some(f) = flow {
        if !ids_seen {
            return Err(format!(
                "the trace has no flow column, so it has no rows of flow {f:?}"
            ));
        }
    }
    if rows.is_empty() {
        return Err(match flow {
            Some(f) => format!("no rows of flow {f:?}"),
            None => "no rows".to_string(),
        });
    }
    Ok(rows)
}

/// 64-bit FNV-1a of `bytes`: a digest that tells two traces apart (not a security hash).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_filter_by_flow() {
        let text = "time,size,flow\n0.0, 100, a\n0.5,200,b\n# note\n\n1.25,300,a\n";
        let all = parse(text, None).unwrap();
        assert_eq!(all.len(), 3);
        let a = parse(text, Some("a")).unwrap();
        assert_eq!(
            a,
            vec![
                TraceRow {
                    at_ns: 0,
                    size: 100
                },
                TraceRow {
                    at_ns: 1_250_000_000,
                    size: 300
                }
            ]
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let cases = [
            ("0,100\nx,100\n", "line 2: the time is not"),
            ("0,100\n1,0\n", "line 2: the size is out of range"),
            ("0,100\n1,70000\n", "line 2: the size is out of range"),
            ("1,100\n0.5,100\n", "line 2: the time goes back"),
            ("0,100,a,b\n", "line 1: expected"),
            ("0,1.5\n", "line 1: the size is not a whole"),
            ("-1,100\n", "line 1: the time is out of range"),
            ("", "no rows"),
        ];
        for (text, want) in cases {
            let e = parse(text, None).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        assert!(parse("0,100\n", Some("a"))
            .unwrap_err()
            .contains("no flow column"));
        assert_eq!(
            parse("0,100,a\n", Some("b")).unwrap_err(),
            "no rows of flow \"b\""
        );
    }
}
