//! qoslab-emu: emulation mode. The link daemon (`qoslab-linkd`) runs the scenario's traffic
//! conditioners and queue disciplines — the simulator's own Rust types — on real Linux
//! packets taken from NFQUEUE; `python/qoslab/emulation/` builds the namespaces, veths, routes
//! and traffic around it. See docs/emulation.md.

pub mod emulator;
pub mod ipv4;
pub mod plan;
