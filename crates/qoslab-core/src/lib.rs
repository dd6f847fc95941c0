//! qoslab-core: a packet-level network simulator for DiffServ traffic conditioners and active
//! queue management, with no Python dependency.
//!
//! Layers, bottom up:
//! * [`units`] — integer-nanosecond time, rates in bit/s, sizes in bytes, and their parsers;
//! * [`rng`] — one seeded random stream per component, derived from (run seed, component id);
//! * [`engine`] — the event queue, FIFO among simultaneous events;
//! * [`packet`] — packet metadata in an arena, moved by id ([`prefetch`]: cache hints for it);
//! * [`aqm`] — queue disciplines as pure state machines (DropTail, RED and its parts);
//! * [`traffic`] — TCP Reno/NewReno senders and sinks (ns-2 one-way semantics), UDP sources;
//! * [`net`] — link directions (queue host, transmitter, propagation pipe) and pcap capture;
//! * [`scenario`] — the scenario schema, its validation and resolution;
//! * [`sim`] — the simulation that ties them together and collects results;
//! * [`parquet`] — a minimal Parquet writer for the run's tables.
//!
//! Invariants checked at the end of every run: for every flow, data packets sent equal those
//! delivered, dropped or still in flight (and the same for ACKs); for every link direction,
//! arrivals equal departures, drops and packets still queued.

pub mod aqm;
pub mod conditioner;
pub mod ds;
pub mod engine;
pub mod event;
pub mod net;
pub mod packet;
pub mod params;
pub mod parquet;
pub mod prefetch;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod traffic;
pub mod units;

pub use scenario::{Scenario, ScenarioError};
pub use sim::{jain_index, RunResults, Simulation};
