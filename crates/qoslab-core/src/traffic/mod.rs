//! Traffic sources and transports.
pub mod sink;
pub mod sizes;
pub mod tcp;
pub mod trace;
pub mod udp;
