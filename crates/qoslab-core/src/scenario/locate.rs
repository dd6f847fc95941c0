//! Maps key paths (`link[2].queue.min_th`) to positions in a TOML source and back, so that
//! every scenario error names the line and the key, whether it was found by the parser or by
//! the semantic checks that run afterwards.

use toml::de::{DeTable, DeValue};

/// 1-based line and column of byte `offset` in `src`.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
    (line, col)
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            if let Ok(n) = idx.trim_end_matches(']').parse() {
                out.push(Seg::Index(n));
            }
        }
    }
    out
}

/// Byte span of the deepest part of `path` that exists in `src` (the key for a leaf).
pub fn span_of(src: &str, path: &str) -> Option<std::ops::Range<usize>> {
    let root = DeTable::parse(src).ok()?;
    let mut value: Option<&DeValue> = None;
    let mut table: Option<&DeTable> = Some(root.get_ref());
    let mut span = None;
    for seg in segments(path) {
        match seg {
            Seg::Key(k) => {
                // A key the file does not have (a required one left out): its table's position.
                let Some((key, v)) =
                    table.and_then(|t| t.iter().find(|(key, _)| key.get_ref().as_ref() == k))
                else {
                    return span;
                };
                span = Some(key.span());
                value = Some(v.get_ref());
                table = match v.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
            Seg::Index(i) => {
                let DeValue::Array(a) = value? else {
                    return span;
                };
                let Some(item) = a.get(i) else {
                    return span;
                };
                span = Some(item.span());
                value = Some(item.get_ref());
                table = match item.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
        }
    }
    span
}

/// The key path of the innermost key or value whose span contains `offset`.
pub fn path_at(src: &str, offset: usize) -> Option<String> {
    fn walk(v: &DeValue, path: &str, offset: usize, best: &mut Option<(usize, String)>) {
        fn consider(
            best: &mut Option<(usize, String)>,
            offset: usize,
            span: std::ops::Range<usize>,
            p: String,
        ) {
            if span.start <= offset && offset < span.end.max(span.start + 1) {
                let width = span.end - span.start;
                if best.as_ref().is_none_or(|(w, _)| width <= *w) {
                    *best = Some((width, p));
                }
            }
        }
        match v {
            DeValue::Table(t) => {
                for (k, val) in t.iter() {
                    let p = if path.is_empty() {
                        k.get_ref().to_string()
                    } else {
                        format!("{path}.{}", k.get_ref())
                    };
                    consider(best, offset, k.span(), p.clone());
                    consider(best, offset, val.span(), p.clone());
                    walk(val.get_ref(), &p, offset, best);
                }
            }
            DeValue::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    let p = format!("{path}[{i}]");
                    consider(best, offset, item.span(), p.clone());
                    walk(item.get_ref(), &p, offset, best);
                }
            }
            _ => {}
        }
    }
    let root = DeTable::parse(src).ok()?;
    let mut best = None;
    walk(
        &DeValue::Table(root.get_ref().clone()),
        "",
        offset,
        &mut best,
    );
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "name = \"x\"\n\n[[link]]\na = \"s0\"\n\n[[link]]\na = \"s1\"\nqueue = { type = \"red\", min_th = 5 }\n";

    #[test]
    fn finds_keys_in_arrays_of_tables() {
        let s = span_of(SRC, "link[1].queue.min_th").unwrap();
        assert_eq!(line_col(SRC, s.start).0, 8);
        let s = span_of(SRC, "link[0].a").unwrap();
        assert_eq!(line_col(SRC, s.start).0, 4);
        assert!(span_of(SRC, "nope").is_none());
    }

    #[test]
    fn a_missing_key_is_placed_at_its_table() {
        // A required key left out (`max_th` of link[1]'s queue): the line of the queue table.
        let s = span_of(SRC, "link[1].queue.max_th").unwrap();
        assert_eq!(line_col(SRC, s.start).0, 8);
        let s = span_of(SRC, "link[0].queue.in").unwrap();
        assert_eq!(
            line_col(SRC, s.start).0,
            3,
            "link[0] has no queue: its [[link]] header"
        );
        let s = span_of(SRC, "link[5].a").unwrap();
        assert_eq!(
            line_col(SRC, s.start).0,
            3,
            "no link[5]: the first [[link]]"
        );
    }

    #[test]
    fn path_from_offset() {
        let off = SRC.find("min_th").unwrap();
        assert_eq!(path_at(SRC, off).as_deref(), Some("link[1].queue.min_th"));
        let off = SRC.find("a = \"s0\"").unwrap();
        assert_eq!(path_at(SRC, off).as_deref(), Some("link[0].a"));
    }
}
