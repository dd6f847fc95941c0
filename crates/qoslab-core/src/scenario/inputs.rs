//! The files a scenario names for reading (empirical CDFs, traces): confined to the scenario's
//! own folder unless the user allows another one (`--allow-path DIR`, `allow_paths=` in
//! Python). A scenario is code someone else may have written: without this, `cdf =
//! "/etc/passwd"` or `trace = "../../.ssh/id_rsa"` would read (and, through a parse error,
//! print) any file the user can read.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{bad, Bad};

/// Where a scenario's input files may be read from: `base` (the scenario file's folder, or the
/// working directory for a scenario that has no file) and the folders the user allowed. A
/// name is resolved against `base`; the file it reaches, with every symbolic link resolved,
/// must lie inside `base` or one of `allowed`.
#[derive(Debug, Clone)]
pub struct InputRoots {
    pub base: PathBuf,
    pub allowed: Vec<PathBuf>,
}

impl InputRoots {
    /// Only `base`.
    pub fn confined_to(base: impl Into<PathBuf>) -> InputRoots {
        InputRoots {
            base: base.into(),
            allowed: Vec::new(),
        }
    }

    /// The canonical file `name` names, or why it may not be read. The error names the path
    /// as written and the folder it had to stay in, never anything read from the file.
    fn locate(&self, name: &str) -> Result<PathBuf, String> {
        if name.is_empty() || name.contains('\0') {
            return Err(format!("{name:?} names no file"));
        }
        let path = self.base.join(name);
        let real = path
            .canonicalize()
            .map_err(|e| format!("cannot read {}: {}", path.display(), io_reason(&e)))?;
        let base = self.base.canonicalize().map_err(|e| {
            format!(
                "cannot read {}: the scenario's folder {}: {}",
                path.display(),
                self.base.display(),
                io_reason(&e)
            )
        })?;
        let inside = |root: &Path| root.canonicalize().is_ok_and(|r| real.starts_with(r));
        if real.starts_with(&base) || self.allowed.iter().any(|a| inside(a)) {
            return Ok(real);
        }
        let via = if !name.starts_with('/') && !name.split('/').any(|c| c == "..") {
            " (through a symbolic link)"
        } else {
            ""
        };
        Err(format!(
            "{name:?} is outside the scenario's folder {}{via}: files a scenario reads must be \
             inside its folder, or in a folder allowed with --allow-path DIR",
            base.display()
        ))
    }
}

/// An OS error's reason without Rust's "(os error N)" suffix.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Reads the file `name` names (see [`InputRoots`]): at most `limit` bytes of UTF-8 text.
/// Returns the path as the user wrote it, resolved against the scenario's folder (for
/// messages), and the text. Errors name the file, never its content.
pub(super) fn read_file(
    key: &str,
    name: &str,
    roots: &InputRoots,
    limit: u64,
) -> Result<(PathBuf, String), Bad> {
    let shown = roots.base.join(name);
    let real = roots.locate(name).map_err(|m| bad(key, m))?;
    let cannot = |e: std::io::Error| {
        bad(
            key,
            format!("cannot read {}: {}", shown.display(), io_reason(&e)),
        )
    };
    let meta = std::fs::metadata(&real).map_err(cannot)?;
    if !meta.is_file() {
        return Err(bad(key, format!("{} is not a file", shown.display())));
    }
    let over = |n: u64| {
        bad(
            key,
            format!(
                "{} is {n} bytes or more, over the limit of {limit} bytes",
                shown.display()
            ),
        )
    };
    if meta.len() > limit {
        return Err(over(meta.len()));
    }
    // Read at most limit + 1 bytes: a file whose size the metadata does not tell (/proc) is
    // held to the limit too.
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(over(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        bad(
            key,
            format!(
                "{} is not UTF-8 text (an invalid byte at offset {})",
                shown.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok((shown, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("qoslab-inputs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("scen")).unwrap();
        std::fs::create_dir_all(d.join("other")).unwrap();
        std::fs::write(d.join("scen/ok.cdf"), "1 0.5\n2 1\n").unwrap();
        std::fs::write(d.join("other/secret.cdf"), "1 0.5\n2 1\n").unwrap();
        d
    }

    #[test]
    fn reads_inside_and_refuses_outside() {
        let d = tmp("a");
        let roots = InputRoots::confined_to(d.join("scen"));
        assert!(read_file("k", "ok.cdf", &roots, 100).is_ok());
        for name in ["../other/secret.cdf", "/etc/passwd", "/proc/self/environ"] {
            let e = read_file("k", name, &roots, 1 << 20).unwrap_err();
            assert!(
                e.message.contains("outside the scenario's folder"),
                "{name}: {}",
                e.message
            );
        }
        // a symbolic link inside the folder that leads out of it
        std::os::unix::fs::symlink(d.join("other/secret.cdf"), d.join("scen/link.cdf")).unwrap();
        let e = read_file("k", "link.cdf", &roots, 100).unwrap_err();
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        // allowed explicitly
        let allowed = InputRoots {
            base: d.join("scen"),
            allowed: vec![d.join("other")],
        };
        assert!(read_file("k", "../other/secret.cdf", &allowed, 100).is_ok());
        assert!(read_file("k", "link.cdf", &allowed, 100).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_of_unknown_size_is_held_to_the_limit() {
        // /proc files report a size of 0; their content still counts.
        let roots = InputRoots {
            base: PathBuf::from("/"),
            allowed: vec![],
        };
        let e = read_file("k", "proc/self/status", &roots, 8).unwrap_err();
        assert!(
            e.message.contains("over the limit of 8 bytes"),
            "{}",
            e.message
        );
    }
}
