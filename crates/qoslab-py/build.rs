//! Fingerprints the simulator's source so that `qoslab.__version__` names the exact model
//! that produced a result ("0.1.0+1a2b3c4d5e6f"): the result store keys runs by version, and a
//! changed core must never reuse results computed by another. The Python modules that shape a
//! stored run (tables, summary, metrics, scenario overrides) are part of the fingerprint, and
//! the data files the core compiles in (`include_str!`: the flow-size CDFs); the core's
//! unit-test files (compiled only under `cfg(test)`) are not.

use std::fs;
use std::path::{Path, PathBuf};

/// A unit-test file: `tests.rs`, `*_tests.rs`, or anything under a `tests` folder. Each is
/// declared under `#[cfg(test)]` (tests/test_code_shape.py holds every declaration to it), so
/// none is compiled into the library a run uses and a change to one cannot change a result.
fn is_test_only(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "tests" || name == "tests.rs" || name.ends_with("_tests.rs")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if is_test_only(&p) {
                continue;
            }
            if p.is_dir() {
                collect(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| x == "rs" || x == "toml" || x == "cdf")
            {
                out.push(p);
            }
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = root.join("../qoslab-core");
    let mut files = Vec::new();
    for d in [core.join("src"), root.join("src")] {
        collect(&d, &mut files);
    }
    files.push(core.join("Cargo.toml"));
    // The Python modules that shape what a run stores: every module the run path imports (a
    // worker's tasks.execute and the store that records its result; tests/test_code_shape.py
    // derives that set from the imports and fails when one is missing here): its tables and
    // summary (runs/simulate, report/pairwise, summary_keys), its metrics (runs/tasks), its
    // budget and stopping (budget, budget_packets), how a scenario is read and overridden (scenario), how the
    // result is stored (store/: its __init__, checks, schema), its warm-up (warmup). Paths are relative to
    // python/qoslab. A change to any of them must not reuse stored results.
    let py = root.join("../../python/qoslab");
    let py_files: Vec<PathBuf> = [
        "__init__.py",
        "errors.py",
        "gc_pause.py",
        "report/pairwise.py",
        "budget.py",
        "budget_packets.py",
        "runs/rundir.py",
        "runs/simulate.py",
        "runs/columnar.py",
        "runs/tasks.py",
        "runs/transfers.py",
        "scenario.py",
        "store/__init__.py",
        "store/checks.py",
        "store/schema.py",
        "summary_keys.py",
        "warmup.py",
    ]
    .iter()
    .map(|f| py.join(f))
    .filter(|p| p.exists())
    .collect();
    files.extend(py_files.iter().cloned());
    files.sort();
    // FNV-1a, 64 bits, over each file's path (relative) and contents.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        for b in rel.bytes().chain(fs::read(f).unwrap_or_default()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=QOSLAB_SOURCE_HASH={:012x}", h >> 16);
    println!("cargo:rerun-if-changed={}", core.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        core.join("Cargo.toml").display()
    );
    println!("cargo:rerun-if-changed={}", root.join("src").display());
    for f in &py_files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
}
