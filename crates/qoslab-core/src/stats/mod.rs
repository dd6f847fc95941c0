//! Streaming statistics for per-packet measurements: memory-bounded quantiles with a
//! relative-error guarantee ([`QuantileSketch`], after DDSketch — Masson, Rim and Lee,
//! PVLDB 2019) and the RTP interarrival jitter estimator ([`Rfc3550Jitter`], RFC 3550
//! §6.4.1). Both are updated once per delivered packet, so their update paths do no
//! allocation in steady state.

pub mod jitter;
pub mod sketch;

pub use jitter::Rfc3550Jitter;
pub use sketch::{QuantileSketch, DEFAULT_ALPHA, DEFAULT_MAX_BUCKETS};
