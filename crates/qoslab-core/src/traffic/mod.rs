//! Traffic sources and transports.
pub mod cc;
pub mod counters;
pub mod linux;
pub mod pacing;
pub mod sender;
pub mod sink;
pub mod sizes;
pub mod sources;
pub mod tcp;
pub mod trace;
pub mod udp;
