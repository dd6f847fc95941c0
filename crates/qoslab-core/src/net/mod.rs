//! Network plumbing: link directions with their queue host, transmitter and propagation pipe.
pub mod link;
pub mod pcap;
pub mod ring;
