//! What the examples share: reading their arguments and the scenario file with one line on
//! bad input, and writing to a pipe that may close.
#![allow(dead_code)] // each example uses a part

use qoslab_core::Scenario;

/// `println!`, except that a closed pipe (`| head`) ends the program quietly instead of
/// panicking.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, $($t)*).and_then(|_| stdout.flush()).is_err() {
            std::process::exit(0);
        }
    }};
}

/// The program's arguments, or the usage line and exit status 2 where there are fewer than
/// `required` or more than `required + optional` of them.
pub fn args(usage: &str, required: usize, optional: usize) -> Vec<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < required || args.len() > required + optional {
        eprintln!("usage: {usage}");
        std::process::exit(2);
    }
    args
}

/// The seed in `arg` (1 where absent), or one line and exit status 2.
pub fn seed(arg: Option<&String>) -> u64 {
    match arg.map(|s| s.parse()) {
        None => 1,
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            eprintln!(
                "SEED {:?}: {e} (a whole number from 0 to {})",
                arg.map_or("", |s| s.as_str()),
                u64::MAX
            );
            std::process::exit(2);
        }
    }
}

/// The scenario in the file at `path`, or the reader's or the parser's one line and exit
/// status 1.
pub fn scenario(path: &str) -> Scenario {
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    match Scenario::from_toml(&src, path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
