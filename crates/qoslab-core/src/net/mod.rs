//! Network plumbing: link directions with their queue host, transmitter and propagation pipe.
pub(crate) mod busy_clock;
pub mod jitter;
pub mod link;
pub mod pcap;
pub mod ring;
