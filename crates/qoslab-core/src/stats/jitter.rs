//! Interarrival jitter as defined by RTP.
//!
//! Reference: H. Schulzrinne, S. Casner, R. Frederick, V. Jacobson, "RTP: A Transport
//! Protocol for Real-Time Applications", RFC 3550, July 2003, §6.4.1 (the definition of
//! `D(i,j)` and of the running estimate `J`) and Appendix A.8 (computing it incrementally).
//!
//! For consecutive packets `i−1`, `i` (in arrival order) with send times `S` and receive
//! times `R`, `D(i−1,i) = (R_i − R_{i−1}) − (S_i − S_{i−1})`, which equals the difference of
//! their transit times `R − S`; the estimate is updated as `J += (|D| − J)/16`. Times here are
//! integer nanoseconds; the differences are taken as signed integers (so a receive clock behind
//! the send clock is fine — only transit *differences* matter) and `J` is kept in `f64`
//! nanoseconds, without the RFC's fixed-point scaling.

/// Running RFC 3550 interarrival-jitter estimate for one stream of packets.
#[derive(Debug, Clone, Default)]
pub struct Rfc3550Jitter {
    jitter: f64,
    packets: u64,
    /// Transit time `R − S` of the last packet, ns.
    last_transit: Option<i64>,
}

impl Rfc3550Jitter {
    /// An estimator that has seen no packet (`J = 0`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Accounts for one packet, in the order packets are received.
    pub fn on_packet(&mut self, sent_ns: u64, received_ns: u64) {
        // Simulated times stay below 2^63 ns (292 years): the differences fit an i64 (the
        // i128 arithmetic this replaces cost a software conversion per packet).
        let transit = received_ns as i64 - sent_ns as i64;
        if let Some(prev) = self.last_transit {
            let d = ((transit - prev) as f64).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
        self.packets += 1;
    }

    /// Current estimate `J` in nanoseconds (0 until two packets have been seen).
    pub fn jitter_ns(&self) -> f64 {
        self.jitter
    }

    /// Number of packets accounted for.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Transit time `received − sent` of the last packet in nanoseconds (negative if the
    /// receive clock is behind), or `None` before the first packet.
    pub fn last_transit_ns(&self) -> Option<i64> {
        self.last_transit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_before_two_packets() {
        let mut j = Rfc3550Jitter::new();
        assert_eq!(j.jitter_ns(), 0.0);
        assert_eq!(j.last_transit_ns(), None);
        j.on_packet(1_000, 51_000);
        assert_eq!(j.jitter_ns(), 0.0);
        assert_eq!(j.packets(), 1);
        assert_eq!(j.last_transit_ns(), Some(50_000));
    }

    /// Sends every 1000 ns; transit times 500, 600, 400, 700, 500 ns.
    ///   D = +100, −200, +300, −200
    ///   J1 = 0        + (100 − 0)/16        = 6.25
    ///   J2 = 6.25     + (200 − 6.25)/16     = 6.25 + 12.109375       = 18.359375
    ///   J3 = 18.359375 + (300 − 18.359375)/16 = 18.359375 + 17.6025390625 = 35.9619140625
    ///   J4 = 35.9619140625 + (200 − 35.9619140625)/16
    ///      = 35.9619140625 + 10.25238037109375 = 46.21429443359375
    /// Every step divides by 16 and adds numbers with few binary digits, so the values are
    /// exact in f64.
    #[test]
    fn scripted_sequence_matches_hand_computation() {
        let sent = [0u64, 1000, 2000, 3000, 4000];
        let recv = [500u64, 1600, 2400, 3700, 4500];
        let expected = [0.0, 6.25, 18.359375, 35.9619140625, 46.21429443359375];
        let mut j = Rfc3550Jitter::new();
        for k in 0..sent.len() {
            j.on_packet(sent[k], recv[k]);
            assert_eq!(j.jitter_ns(), expected[k], "after packet {k}");
        }
        assert_eq!(j.packets(), 5);
        assert_eq!(j.last_transit_ns(), Some(500));

        // A constant clock offset (here the receiver 1 s behind the sender) changes every
        // transit time by the same amount and leaves J unchanged.
        let mut shifted = Rfc3550Jitter::new();
        for k in 0..sent.len() {
            shifted.on_packet(sent[k] + 1_000_000_000, recv[k]);
        }
        assert_eq!(shifted.jitter_ns(), j.jitter_ns());
        assert_eq!(shifted.last_transit_ns(), Some(500 - 1_000_000_000));
    }

    #[test]
    fn constant_transit_gives_zero() {
        let mut j = Rfc3550Jitter::new();
        for k in 0..1000u64 {
            // Irregular sending, constant 3 ms transit.
            let s = k * 20_000_000 + (k * k % 7) * 1_000;
            j.on_packet(s, s + 3_000_000);
        }
        assert_eq!(j.jitter_ns(), 0.0);
    }

    /// Transit alternating T + d, T − d: every |D| = 2d, so after k differences
    /// J_k = 2d·(1 − (15/16)^k) → 2d. After 2000 packets (15/16)^1999·2d is far below 1e-9.
    #[test]
    fn alternating_transit_converges_to_2d() {
        let d = 1_000u64;
        let base = 5_000_000u64;
        let mut j = Rfc3550Jitter::new();
        for k in 0..2000u64 {
            let s = k * 1_000_000;
            let transit = if k % 2 == 0 { base + d } else { base - d };
            j.on_packet(s, s + transit);
            if k == 10 {
                // 10 differences so far.
                let closed = 2.0 * d as f64 * (1.0 - (15.0f64 / 16.0).powi(10));
                assert!((j.jitter_ns() - closed).abs() < 1e-9, "{}", j.jitter_ns());
            }
        }
        assert!(
            (j.jitter_ns() - 2.0 * d as f64).abs() < 1e-9,
            "{}",
            j.jitter_ns()
        );
    }
}
