//! Congestion control: the seam between the TCP sender ([`super::tcp::Ns2Sender`], which keeps
//! the sequence space, loss detection and recovery, timers and the RTT estimator) and the
//! algorithm that sets the congestion window (cwnd) and slow-start threshold (ssthresh).
//!
//! The split follows ns-3's `TcpCongestionOps` over `TcpSocketState` and smoltcp's
//! `Controller`: an algorithm is a small state machine in one file, driven by hooks that
//! take `now` and return nothing but the new [`Window`]. The sender calls
//!
//! * [`CongestionControl::on_ack`] on every ACK that acknowledges new data (with the number of
//!   segments newly acknowledged, the ECN-Echo flag and, when one segment was timed, an RTT
//!   sample): measurement only (DCTCP's marked fraction, CUBIC's RTT);
//! * [`CongestionControl::increase`] where ns-2 opens the window (a new ACK outside loss
//!   recovery that does not carry ECN-Echo);
//! * [`CongestionControl::on_congestion`] on entering loss recovery (the third duplicate ACK),
//!   [`CongestionControl::on_ecn_echo`] on an ECN-Echo at most once per window of data, and
//!   [`CongestionControl::on_timeout`] on a retransmission timeout with data outstanding;
//!   `flight` is ns-2's `windowd()` (cwnd plus the recovery inflation, capped by the
//!   advertised window), the amount of data the sender could have in flight.
//!
//! [`cc_registry!`] turns one line per variant into [`TcpVariant`] (the scenario's
//! `tcp.variant`, serialised by name), [`VARIANT_NAMES`] (the key's choices) and [`AnyCc`]
//! (dispatched by `match`, no boxing). A variant names an algorithm and a loss-recovery
//! flavour; an unknown name is a scenario error listing these names.

#[macro_use]
mod constants;
pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod exports;
pub mod hystart;
pub mod rate;
pub mod reno;

use crate::params::{KeyError, Param, Table};
use crate::units::SimTime;
pub use constants::{NoParams, Tunable};
pub use exports::SenderExports;

/// The congestion window and slow-start threshold, packets (fractional).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// What an ACK of new data tells the algorithm.
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    pub now: SimTime,
    /// Segments newly acknowledged cumulatively by this ACK (at least 1).
    pub acked: u32,
    /// The ACK carries ECN-Echo.
    pub ece: bool,
    /// The cumulative ACK (highest in-order segment received).
    pub ackno: i64,
    /// SND.NXT: the next new segment the sender would send (RFC 8257's window boundary).
    pub snd_nxt: i64,
    /// An RTT sample in ns (Karn's rule: a timed segment, never a retransmission).
    pub rtt_ns: Option<u64>,
    /// Segments outstanding after this ACK (highest sent − ackno).
    pub in_flight: i64,
    /// A NewReno partial ACK: loss recovery goes on.
    pub in_recovery: bool,
}

/// A congestion-control algorithm: see the module documentation. Every hook gets the current
/// window and writes the new one; none reads a clock.
pub trait CongestionControl {
    /// Measurement on every ACK of new data, in recovery or not (default: nothing).
    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
    /// Opens the window on a new ACK outside loss recovery.
    fn increase(&mut self, w: &mut Window, ack: &AckSample);
    /// Entering loss recovery (fast retransmit): the multiplicative decrease.
    fn on_congestion(&mut self, w: &mut Window, flight: f64, now: SimTime);
    /// An ECN-Echo, at most once per window of data (default: as a loss, RFC 3168 §6.1.2).
    fn on_ecn_echo(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        self.on_congestion(w, flight, now);
    }
    /// A retransmission timeout with data outstanding: ssthresh set, cwnd to 1.
    fn on_timeout(&mut self, w: &mut Window, flight: f64, now: SimTime);
    /// Segment `seq` leaves at `now` with `in_flight` segments outstanding before it and
    /// `highest_ack` acknowledged (delivery-rate estimation; default: nothing).
    fn on_send(&mut self, _seq: i64, _now: SimTime, _in_flight: i64, _highest_ack: i64) {}
    /// The application has nothing to send while the window has room.
    fn on_app_limited(&mut self, _in_flight: i64) {}
    /// The pacing rate the algorithm asks for, packets per second (default: none).
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// The sender must pace whatever `tcp.pacing` says (BBR).
    fn always_paces(&self) -> bool {
        false
    }
    /// A per-flow uniform draw in [0, 1) (the sender's clock phase), for algorithms that
    /// randomise a start (BBR's first ProbeBW phase).
    fn set_phase(&mut self, _phase: f64) {}
    /// The flow's segment size, bytes, for algorithms that size in bytes (BBR's send quantum).
    fn set_segment_size(&mut self, _bytes: u32) {}
}

/// Loss recovery after fast retransmit (the sender's part of a variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// ns-2 `Agent/TCP/Reno`: recovery ends with the first new ACK.
    Reno,
    /// ns-2 `Agent/TCP/Newreno` (RFC 6582): partial ACKs retransmit and stay in recovery.
    NewReno,
    /// SACK-based loss recovery (RFC 6675; the receiver reports RFC 2018 blocks).
    Sack,
}

/// The one list of TCP variants: `"name" => Variant(algorithm type, recovery, doc) exports`,
/// `exports` being the variant's [`SenderExports`], declared in its algorithm's file.
macro_rules! cc_registry {
    ($($name:literal => $variant:ident($ty:ty, $rec:ident, $doc:literal) $exports:path,)+) => {
        /// `tcp.variant`: the congestion-control algorithm and loss recovery of a TCP flow.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
        pub enum TcpVariant {
            $(#[doc = $doc] #[serde(rename = $name)] $variant,)+
        }

        /// The names `tcp.variant` accepts, in registry order.
        pub const VARIANT_NAMES: &[&str] = &[$($name),+];

        impl TcpVariant {
            pub fn name(self) -> &'static str {
                match self { $(TcpVariant::$variant => $name,)+ }
            }
            /// Its loss recovery.
            pub fn recovery(self) -> Recovery {
                match self { $(TcpVariant::$variant => Recovery::$rec,)+ }
            }
            /// One line describing it (for the scenario reference and docs).
            pub fn doc(self) -> &'static str {
                match self { $(TcpVariant::$variant => $doc,)+ }
            }
            /// What it is outside the simulator (ns-2, ns-3, the kernel).
            pub fn exports(self) -> SenderExports {
                match self { $(TcpVariant::$variant => $exports,)+ }
            }
        }

        /// A flow's congestion-control state, dispatched by `match`.
        #[derive(Debug, Clone)]
        pub enum AnyCc {
            $($variant($ty),)+
        }

        cc_constants!($($name => $variant($ty),)+);

        /// Dispatch by `match` on the concrete type: no virtual call on the per-ACK and
        /// per-segment path.
        impl CongestionControl for AnyCc {
            #[inline]
            fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
                match self { $(AnyCc::$variant(c) => c.on_ack(w, ack),)+ }
            }
            #[inline]
            fn increase(&mut self, w: &mut Window, ack: &AckSample) {
                match self { $(AnyCc::$variant(c) => c.increase(w, ack),)+ }
            }
            fn on_congestion(&mut self, w: &mut Window, flight: f64, now: SimTime) {
                match self { $(AnyCc::$variant(c) => c.on_congestion(w, flight, now),)+ }
            }
            fn on_ecn_echo(&mut self, w: &mut Window, flight: f64, now: SimTime) {
                match self { $(AnyCc::$variant(c) => c.on_ecn_echo(w, flight, now),)+ }
            }
            fn on_timeout(&mut self, w: &mut Window, flight: f64, now: SimTime) {
                match self { $(AnyCc::$variant(c) => c.on_timeout(w, flight, now),)+ }
            }
            #[inline]
            fn on_send(&mut self, seq: i64, now: SimTime, in_flight: i64, highest_ack: i64) {
                match self { $(AnyCc::$variant(c) => c.on_send(seq, now, in_flight, highest_ack),)+ }
            }
            #[inline]
            fn on_app_limited(&mut self, in_flight: i64) {
                match self { $(AnyCc::$variant(c) => c.on_app_limited(in_flight),)+ }
            }
            #[inline]
            fn pacing_rate(&self) -> Option<f64> {
                match self { $(AnyCc::$variant(c) => c.pacing_rate(),)+ }
            }
            fn always_paces(&self) -> bool {
                match self { $(AnyCc::$variant(c) => c.always_paces(),)+ }
            }
            fn set_phase(&mut self, phase: f64) {
                match self { $(AnyCc::$variant(c) => c.set_phase(phase),)+ }
            }
            fn set_segment_size(&mut self, bytes: u32) {
                match self { $(AnyCc::$variant(c) => c.set_segment_size(bytes),)+ }
            }
        }
    };
}

cc_registry! {
    "reno" => Reno(reno::Reno, Reno, "ns-2.35 Agent/TCP/Reno: AIMD, Reno fast recovery.")
        reno::RENO,
    "newreno" => Newreno(reno::Reno, NewReno,
        "ns-2.35 Agent/TCP/Newreno: AIMD, NewReno fast recovery (RFC 6582).") reno::NEWRENO,
    "sack" => Sack(reno::Reno, Sack,
        "Reno congestion control with SACK loss recovery (RFC 2018, RFC 6675).") reno::SACK,
    "cubic" => Cubic(cubic::Cubic, NewReno,
        "CUBIC (RFC 9438) with HyStart and NewReno fast recovery.") cubic::EXPORTS,
    "dctcp" => Dctcp(dctcp::Dctcp, NewReno,
        "DCTCP (RFC 8257): window cut by the marked fraction; implies ecn.") dctcp::EXPORTS,
    // Boxed: its state (filters, the per-segment ring) would make every flow's `AnyCc` large.
    "bbr" => Bbr(Box<bbr::Bbr>, NewReno,
        "BBR v1 (Cardwell et al. 2016): model-based rate and window; always paced.") bbr::EXPORTS,
}

impl AnyCc {
    /// Heap memory held by the algorithm beyond its enum slot, bytes: BBR's box and its
    /// delivery-rate states, CUBIC's HyStart send times.
    pub fn heap_bytes(&self) -> usize {
        match self {
            AnyCc::Cubic(c) => c.hystart.heap_bytes(),
            AnyCc::Bbr(b) => std::mem::size_of::<bbr::Bbr>() + b.sampler.heap_bytes(),
            AnyCc::Reno(_) | AnyCc::Newreno(_) | AnyCc::Sack(_) | AnyCc::Dctcp(_) => 0,
        }
    }
}

/// A boxed algorithm takes its algorithm's constants.
impl<T: Tunable> Tunable for Box<T> {
    type Params = T::Params;
    const PARAMS: &'static [Param] = T::PARAMS;
    fn read(t: &Table) -> Result<T::Params, KeyError> {
        T::read(t)
    }
    fn with_params(p: &T::Params) -> Self {
        Box::new(T::with_params(p))
    }
}

/// A boxed algorithm is one (large states are boxed in the registry).
impl<T: CongestionControl + ?Sized> CongestionControl for Box<T> {
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        (**self).on_ack(w, ack)
    }
    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        (**self).increase(w, ack)
    }
    fn on_congestion(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        (**self).on_congestion(w, flight, now)
    }
    fn on_ecn_echo(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        (**self).on_ecn_echo(w, flight, now)
    }
    fn on_timeout(&mut self, w: &mut Window, flight: f64, now: SimTime) {
        (**self).on_timeout(w, flight, now)
    }
    fn on_send(&mut self, seq: i64, now: SimTime, in_flight: i64, highest_ack: i64) {
        (**self).on_send(seq, now, in_flight, highest_ack)
    }
    fn on_app_limited(&mut self, in_flight: i64) {
        (**self).on_app_limited(in_flight)
    }
    fn pacing_rate(&self) -> Option<f64> {
        (**self).pacing_rate()
    }
    fn always_paces(&self) -> bool {
        (**self).always_paces()
    }
    fn set_phase(&mut self, phase: f64) {
        (**self).set_phase(phase)
    }
    fn set_segment_size(&mut self, bytes: u32) {
        (**self).set_segment_size(bytes)
    }
}

impl TcpVariant {
    /// Its receiver echoes ECN per RFC 8257 §3.2 (DCTCP) rather than RFC 3168.
    pub fn dctcp_receiver(self) -> bool {
        self == TcpVariant::Dctcp
    }

    /// ns-2.35's own agents (`reno`, `newreno`): pinned to ns-2, no SACK.
    pub fn is_ns2_agent(self) -> bool {
        matches!(self, TcpVariant::Reno | TcpVariant::Newreno)
    }

    /// Its sender always paces (`tcp.pacing` is implied).
    pub fn always_paces(self) -> bool {
        AnyCc::new(self, None).always_paces()
    }

    /// It needs ECN (`tcp.ecn` is implied) and a queue on its forward route that marks.
    pub fn requires_ecn(self) -> bool {
        self == TcpVariant::Dctcp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_defaults_are_the_published_constants() {
        let empty = toml::Table::new();
        for name in VARIANT_NAMES {
            let v = TcpVariant::from_name(name).unwrap();
            let read = CcParams::read(v, &Table::host(&empty, "tcp.cc")).unwrap();
            assert_eq!(read, CcParams::defaults(v), "{name}");
            assert!(read.is_default());
        }
        assert_eq!(
            CcParams::defaults(TcpVariant::Cubic),
            CcParams::Cubic(cubic::CubicParams {
                c: cubic::C,
                beta: cubic::BETA
            })
        );
        assert_eq!(
            CcParams::defaults(TcpVariant::Dctcp),
            CcParams::Dctcp(dctcp::DctcpParams { g: dctcp::G })
        );
        assert_eq!(
            CcParams::defaults(TcpVariant::Bbr),
            CcParams::Bbr(bbr::BbrParams {
                high_gain: bbr::HIGH_GAIN,
                cwnd_gain: 2.0
            })
        );
    }

    #[test]
    fn tuned_constants_change_the_algorithm() {
        // CUBIC's β: ssthresh = flight·β at a loss (RFC 9438 §4.6).
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 1000.0,
        };
        let p = CcParams::Cubic(cubic::CubicParams { c: 0.4, beta: 0.5 });
        AnyCc::new(TcpVariant::Cubic, Some(&p)).on_congestion(&mut w, 100.0, 0);
        assert_eq!(w.ssthresh, 50.0);
        AnyCc::new(TcpVariant::Cubic, None).on_congestion(&mut w, 100.0, 0);
        assert_eq!(w.ssthresh, 70.0);
        // Another variant's constants are ignored: the variant's defaults apply.
        AnyCc::new(
            TcpVariant::Cubic,
            Some(&CcParams::defaults(TcpVariant::Dctcp)),
        )
        .on_congestion(&mut w, 100.0, 0);
        assert_eq!(w.ssthresh, 70.0);
        // DCTCP's g = 1: Alpha is the last window's marked fraction (RFC 8257 §3.3).
        let p = CcParams::Dctcp(dctcp::DctcpParams { g: 1.0 });
        let AnyCc::Dctcp(mut d) = AnyCc::new(TcpVariant::Dctcp, Some(&p)) else {
            unreachable!()
        };
        let ack = AckSample {
            now: 0,
            acked: 4,
            ece: true,
            ackno: 10,
            snd_nxt: 20,
            rtt_ns: None,
            in_flight: 10,
            in_recovery: false,
        };
        d.on_ack(&mut w, &ack);
        assert_eq!(d.alpha, 1.0);
        d.on_ack(
            &mut w,
            &AckSample {
                ece: false,
                ackno: 20,
                snd_nxt: 30,
                ..ack
            },
        );
        assert_eq!(d.alpha, 0.0);
        // BBR's high gain: Startup paces and sizes cwnd with it.
        let p = CcParams::Bbr(bbr::BbrParams {
            high_gain: 2.0,
            cwnd_gain: 3.0,
        });
        let AnyCc::Bbr(b) = AnyCc::new(TcpVariant::Bbr, Some(&p)) else {
            unreachable!()
        };
        assert_eq!(
            (b.pacing_gain, b.cwnd_gain, b.params.cwnd_gain),
            (2.0, 2.0, 3.0)
        );
    }

    #[test]
    fn names_round_trip_through_serde() {
        for name in VARIANT_NAMES {
            let v: TcpVariant =
                serde::Deserialize::deserialize(toml::Value::String(name.to_string())).unwrap();
            assert_eq!(v.name(), *name);
            assert_eq!(toml::Value::try_from(v).unwrap().as_str(), Some(*name));
        }
    }
}
