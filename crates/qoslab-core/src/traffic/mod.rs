//! Traffic sources and transports.
pub mod sink;
pub mod tcp;
pub mod udp;
