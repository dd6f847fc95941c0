//! Linux's receive-window growth and the quick ACKs it asks for (net/ipv4/tcp_input.c).
//!
//! - `tcp_grow_window`: each in-order segment raises `rcv_ssthresh` by two segments while it is
//!   below the space the receive buffer allows (`room`), and each raise asks for an immediate
//!   ACK (`icsk_ack.quick |= 1`). Once the window reaches that space the receiver is back to
//!   every second segment until the buffer grows.
//! - `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow` (dynamic right-sizing): once per receiver RTT,
//!   when the application read more than in the last one, the buffer becomes what gives a
//!   window of twice the bytes read, plus twice that again times their relative growth (slow
//!   start: the sender doubles its rate every RTT), at most `tcp_rmem[2]`.
//! - `tcp_rcv_rtt_measure` / `tcp_rcv_rtt_update` (no timestamps, as the model and the
//!   validation runs have them): that RTT is the shortest time the receiver took to receive a
//!   window's worth of data (from the segment that advanced `rcv_nxt` until `rcv_nxt` passed
//!   that point plus the window then advertised).
//!
//! - `tcp_select_window`: each ACK offers `rcv_ssthresh`, at most the buffer's share of space,
//!   and never less than what is left of the window offered before (a window is not shrunk),
//!   rounded up to the window scale's unit;
//!   the sender sends nothing past the cumulative point plus that window (`tcp_snd_wnd_test`).
//!
//! The application reads at once (a bulk receiver), so nothing waits in the receive queue and
//! the space is the buffer's. Out-of-order segments are neither charged to the buffer (the
//! kernel's `rmem_alloc`) nor grow it (`tcp_data_queue_ofo` calls `tcp_rcvbuf_grow` with their
//! span): each was tried, and neither brought the validation's five BBR flows of mixed RTTs
//! nearer the kernel's split; nor do they grow `rcv_ssthresh` (the kernel's SACK receiver's do).
//! This decides when the receiver ACKs and how far its sender may send.
//! Constants are the kernel's defaults (`tcp_rmem` = 4096 131072 33554432) and the validation
//! host's window scaling ratio (below).

use crate::units::SimTime;

/// `tcp_rmem[1]`: the receive buffer a connection starts with, bytes.
const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the most dynamic right-sizing gives it, bytes.
const TCP_RMEM_MAX: u64 = 33_554_432;
/// `tp->scaling_ratio` / 256: the share of the buffer a window may use (`tcp_win_from_space`),
/// as `tcp_measure_rcv_mss` sets it from `skb->len / skb->truesize`. 160/256 on the
/// validation host: its receiver's window stopped growing at 56 segments of 1,460 bytes, i.e.
/// 131,072 × 0.625 (docs/validation/linux/capture-cubic-alone-1bdp.json).
const SCALING_RATIO_NUM: u64 = 160;
const SCALING_RATIO_DEN: u64 = 256;
/// The window a connection advertises first: 65,535 rounded down to whole segments
/// (`tcp_select_initial_window` without window scaling's first SYN).
const INITIAL_WINDOW: u64 = 65_535;
/// `TCP_INIT_CWND`: `rcvq_space.space` starts at this many segments.
const TCP_INIT_CWND: u64 = 10;

/// The receiver's window state, in bytes of the flow's segment size.
#[derive(Debug, Clone, Default)]
pub struct RcvSpace {
    /// `tp->rcv_ssthresh`: the window the receiver is prepared to advertise.
    rcv_ssthresh: u64,
    /// `sk_rcvbuf`.
    rcvbuf: u64,
    /// `rcvq_space.space`: bytes read in the last measured RTT.
    space: u64,
    /// `rcvq_space.seq` (segments) and `rcvq_space.time` (ns); None before the first segment.
    space_seq: u64,
    space_time: Option<SimTime>,
    /// `rcv_rtt_est.rtt_us` (µs × 8; 0: no sample yet), and the measurement under way: the
    /// segment `rcv_nxt` must reach (`rcv_rtt_est.seq`) and when it began (`.time`).
    rtt_us8: u64,
    rtt_seq: u64,
    rtt_time: Option<SimTime>,
    /// The segment size the window counts in (`icsk_ack.rcv_mss`), bytes.
    mss: u64,
    /// `tp->rcv_wnd`, bytes, and `tp->rcv_wup`, the segment it was advertised from: the last
    /// window offered (`tcp_select_window`), which a later one may not shrink.
    rcv_wnd: u64,
    rcv_wup: u64,
}

/// `rcv_wscale`: `tcp_select_initial_window` scales by 10 for `tcp_rmem[2]` = 32 MiB (`ss`
/// shows `wscale:10,10` on the validation host); a capture writes the window scaled by it.
pub const RCV_WSCALE: u32 = 10;

/// `1 << rcv_wscale`: the offered window is rounded up to it (`__tcp_select_window`'s `ALIGN`).
const WSCALE_BYTES: u64 = 1 << RCV_WSCALE;

fn align_up(window: u64) -> u64 {
    window.div_ceil(WSCALE_BYTES) * WSCALE_BYTES
}

fn win_from_space(space: u64) -> u64 {
    space * SCALING_RATIO_NUM / SCALING_RATIO_DEN
}

fn space_from_win(win: u64) -> u64 {
    win * SCALING_RATIO_DEN / SCALING_RATIO_NUM
}

impl RcvSpace {
    /// A connection's state at its first segment (`tcp_init_buffer_space`), segments of `len`
    /// bytes, the application having read up to `next`.
    fn start(now: SimTime, len: u64, next: u64) -> Self {
        let wnd = INITIAL_WINDOW / len * len;
        RcvSpace {
            rcv_ssthresh: wnd,
            rcvbuf: TCP_RMEM_DEFAULT,
            space: wnd.min(TCP_INIT_CWND * len),
            space_seq: next,
            space_time: Some(now),
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            mss: len,
            rcv_wnd: wnd,
            rcv_wup: next,
        }
    }

    /// `tcp_select_window` for an ACK sent with the cumulative point at `next` (segments): the
    /// window offered, in whole segments of the connection's size (the sender's
    /// `tcp_snd_wnd_test` sends a segment only when all of it fits); None before the first
    /// segment. A bulk reader leaves nothing queued, so `__tcp_select_window` offers
    /// `rcv_ssthresh`, at most the buffer's share of space; the window is never shrunk (its
    /// right edge never moves left). The window is rounded up to the scale unit (1,024 bytes).
    pub fn select_window(&mut self, next: u64) -> Option<u32> {
        self.space_time?;
        let offered = align_up(self.rcv_ssthresh.min(win_from_space(self.rcvbuf)));
        let edge = self.rcv_wup * self.mss + self.rcv_wnd;
        let left = edge.saturating_sub(next * self.mss);
        self.rcv_wnd = if offered < left {
            align_up(left)
        } else {
            offered
        };
        self.rcv_wup = next;
        Some(u32::try_from(self.rcv_wnd / self.mss).unwrap_or(u32::MAX))
    }

    /// A data segment of `len` bytes arrived at `now`: the connection's state starts with its
    /// first segment, at `next` (the cumulative point before it).
    pub fn on_segment(&mut self, now: SimTime, len: u32, next: u64) {
        if self.space_time.is_none() {
            *self = RcvSpace::start(now, u64::from(len).max(1), next);
        }
    }

    /// In-order data took the cumulative point to `next` at `now` (`tcp_rcv_rtt_measure`): a
    /// window's worth received since the measurement began is a sample, kept only if shorter
    /// (`win_dep`); a new measurement begins with the window now advertised.
    fn measure_rtt(&mut self, now: SimTime, len: u64, next: u64) {
        if let Some(t0) = self.rtt_time {
            if next < self.rtt_seq {
                return;
            }
            let m = (now.saturating_sub(t0) / 1000).max(1) << 3;
            if self.rtt_us8 == 0 || m < self.rtt_us8 {
                self.rtt_us8 = m;
            }
        }
        self.rtt_seq = next + self.rcv_wnd / len;
        self.rtt_time = Some(now);
    }

    /// An in-order segment of `len` bytes took the cumulative point to `next` at `now`
    /// (`tcp_event_data_recv`): the RTT measurement, then `tcp_grow_window`; whether it raised
    /// the window (and so asks for an immediate ACK).
    pub fn on_in_order(&mut self, now: SimTime, len: u32, next: u64) -> bool {
        let len = u64::from(len);
        if self.space_time.is_none() || len == 0 {
            return false;
        }
        self.measure_rtt(now, len, next);
        let limit = win_from_space(self.rcvbuf);
        if self.rcv_ssthresh >= limit || len < 128 {
            return false;
        }
        let room = limit - self.rcv_ssthresh;
        self.rcv_ssthresh += room.min(2 * len);
        true
    }

    /// The application has read up to `next` at `now` (`tcp_rcv_space_adjust`), segments of
    /// `len` bytes: once an RTT, the buffer follows what it read.
    pub fn on_read(&mut self, now: SimTime, len: u32, next: u64) {
        let Some(t0) = self.space_time else { return };
        let rtt_ns = (self.rtt_us8 >> 3) * 1000;
        if rtt_ns == 0 || now.saturating_sub(t0) < rtt_ns {
            return;
        }
        let copied = next.saturating_sub(self.space_seq) * u64::from(len);
        if copied > self.space {
            let old = self.space.max(1);
            self.space = copied;
            let mut rcvwin = copied << 1;
            let grow = rcvwin * (copied - old) / old;
            rcvwin += grow << 1;
            let rcvbuf = space_from_win(rcvwin).min(TCP_RMEM_MAX);
            self.rcvbuf = self.rcvbuf.max(rcvbuf);
        }
        self.space_seq = next;
        self.space_time = Some(now);
    }

    /// `rcv_ssthresh` and `sk_rcvbuf`, bytes.
    #[cfg(test)]
    fn window(&self) -> (u64, u64) {
        (self.rcv_ssthresh, self.rcvbuf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_window_grows_two_segments_a_segment_up_to_the_buffers_share() {
        // 1,460-byte segments: 44 segments first (65,535 rounded down), +2 a segment up to
        // 131,072 × 0.625 = 81,920 bytes (56.1 segments): seven raises, the last partial.
        let mut r = RcvSpace::default();
        r.on_segment(0, 1460, 0);
        assert_eq!(r.window().0, 44 * 1460);
        let raised = (1..=10).filter(|&k| r.on_in_order(k * MS, 1460, k)).count();
        assert_eq!(raised, 7);
        assert_eq!(r.window().0, 81_920);
    }

    #[test]
    fn the_window_offered_grows_with_rcv_ssthresh_and_never_shrinks() {
        let mut r = RcvSpace::default();
        assert_eq!(
            r.select_window(0),
            None,
            "no window before the first segment"
        );
        r.on_segment(0, 1460, 0);
        assert_eq!(
            r.select_window(1),
            Some(44),
            "65,535 bytes: 44 whole segments"
        );
        for k in 1..=10 {
            r.on_in_order(k * MS, 1460, k);
        }
        // rcv_ssthresh at the buffer's share: 81,920 bytes, 56 whole segments
        assert_eq!(r.select_window(10), Some(56));
        // the right edge (segment 10 + 56.1) never moves left: with the offer cut to 10
        // segments, the window offered from segment 20 is what is left of the last one
        r.rcv_ssthresh = 10 * 1460;
        assert_eq!(r.select_window(20), Some(46));
        // once the cumulative point passes that edge, the smaller offer stands
        assert_eq!(r.select_window(70), Some(10));
    }

    #[test]
    fn the_buffer_follows_what_was_read_once_a_window_time() {
        // The validation capture's first rounds (receiver times): segments 0-9 at 20-31 ms,
        // then 10-45 from 61 ms, 1.2 ms apart.
        let mut r = RcvSpace::default();
        let t = |k: u64| {
            if k < 10 {
                20 * MS + k * 1_200_000
            } else {
                61 * MS + (k - 10) * 1_200_000
            }
        };
        for k in 0..44 {
            r.on_segment(t(k), 1460, k);
            r.on_in_order(t(k), 1460, k + 1);
            r.on_read(t(k), 1460, k + 1);
            // no RTT sample before a window (44 segments) has come in: the buffer stays
            assert_eq!(r.window().1, TCP_RMEM_DEFAULT, "segment {k}");
        }
        assert_eq!(
            r.window().0,
            81_920,
            "the window stopped at the buffer's share"
        );
        // segment 44 completes the first window (rcv_nxt 1 + 44 segments): an 81.8 ms sample
        // (20 ms → 101.8 ms), as long as since the buffer's measurement began, so 45 segments
        // read: rcvwin = 2·65,700 + 2·(131,400·(65,700 − 14,600)/14,600)
        let k = 44;
        r.on_segment(t(k), 1460, k);
        assert!(!r.on_in_order(t(k), 1460, k + 1));
        assert_eq!(r.rtt_us8 >> 3, (t(k) - t(0)) / 1000);
        r.on_read(t(k), 1460, k + 1);
        let copied = 45 * 1460;
        let rcvwin = 2 * copied + 2 * (2 * copied * (copied - 14_600) / 14_600);
        assert_eq!(r.window().1, rcvwin * 256 / 160);
        // and the next segment grows the window again
        assert!(r.on_in_order(t(k + 1), 1460, k + 2));
        // a longer window time later is no sample (the minimum is kept)
        let before = r.rtt_us8;
        r.on_in_order(t(k + 1) + 500 * MS, 1460, 10_000);
        assert_eq!(r.rtt_us8, before);
    }
}
