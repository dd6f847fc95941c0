//! A scripted path for whole-sender tests of the congestion controls: the sender, a link of
//! fixed serialisation time and round-trip propagation delay, a real [`TcpSink`] (no delayed
//! ACKs) and scripted losses and CE marks. Departures are FIFO and the delay constant, so
//! each segment's ACK is computed when it is sent and queued in arrival order; the run
//! alternates ACK arrivals and retransmission timeouts in time order.

use std::collections::{BTreeSet, VecDeque};

use super::{Ns2Sender, SendBuf, TcpConfig};
use crate::traffic::sink::{SackBlocks, TcpSink};
use crate::units::SimTime;

pub struct Pipe {
    pub tcp: Ns2Sender,
    sink: TcpSink,
    pub now: SimTime,
    rtt: SimTime,
    tx: SimTime,
    link_free: SimTime,
    /// ACKs on their way back: (arrival at the sender, ackno, ECN-Echo, SACK blocks).
    acks: VecDeque<(SimTime, i64, bool, Option<SackBlocks>)>,
    /// First transmissions of these segments are lost.
    pub drops: BTreeSet<u64>,
    /// Segments that arrive marked CE (by sequence number).
    pub mark: fn(u64) -> bool,
    /// (time, cwnd) after every ACK or timeout.
    pub trace: Vec<(SimTime, f64)>,
    /// (time, sequence number) of every new segment sent.
    pub sent: Vec<(SimTime, u64)>,
    /// The pending pace event of a paced sender.
    pace_at: Option<SimTime>,
    buf: SendBuf,
}

impl Pipe {
    pub fn new(cfg: &TcpConfig, rtt: SimTime, tx: SimTime) -> Pipe {
        Pipe {
            tcp: Ns2Sender::new(cfg, 0.5),
            sink: TcpSink::ns2(cfg),
            now: 0,
            rtt,
            tx,
            link_free: 0,
            acks: VecDeque::new(),
            drops: BTreeSet::new(),
            mark: |_| false,
            trace: Vec::new(),
            sent: Vec::new(),
            pace_at: None,
            buf: SendBuf::new(),
        }
    }

    fn send(&mut self) {
        let ecn = self.tcp.ecn;
        for (seq, rtx, _cwr) in std::mem::take(&mut self.buf) {
            let dep = self.now.max(self.link_free) + self.tx;
            self.link_free = dep;
            if !rtx {
                self.sent.push((self.now, seq));
            }
            if !rtx && self.drops.remove(&seq) {
                continue;
            }
            // Segment 0 carries ns-2's ECN negotiation (ECE, not ECT), as the host sends it.
            let ect = ecn && seq != 0;
            let ce = ect && (self.mark)(seq);
            self.sink.on_ecn(ect, ce, false, ecn && seq == 0);
            self.sink.on_data(seq);
            let ece = ecn && self.sink.take_ece();
            let blocks = self.sink.sack_blocks();
            self.acks
                .push_back((dep + self.rtt, self.sink.ackno(), ece, blocks));
        }
        if let Some(at) = self.tcp.pacer.request() {
            self.pace_at = Some(at);
        }
    }

    pub fn start(&mut self) {
        self.tcp.start(self.now, &mut self.buf);
        self.send();
    }

    /// Runs until `end`; returns the number of retransmission timeouts on the way.
    pub fn run_until(&mut self, end: SimTime) -> u64 {
        let mut timeouts = 0;
        loop {
            let ack_at = self.acks.front().map(|a| a.0);
            let rto_at = self.tcp.rtx_deadline;
            let Some(next) = [ack_at, rto_at, self.pace_at].into_iter().flatten().min() else {
                break;
            };
            if next > end {
                break;
            }
            self.now = next;
            if self.pace_at == Some(next) {
                self.pace_at = None;
                if self.tcp.pacer.on_event(next) {
                    self.tcp.on_pace(next, &mut self.buf);
                }
            } else if ack_at == Some(next) {
                let (_, ackno, ece, blocks) = self.acks.pop_front().expect("an ACK");
                match blocks {
                    Some(b) => self.tcp.on_ack_sack(next, ackno, ece, &b, &mut self.buf),
                    None => self.tcp.on_ack(next, ackno, ece, &mut self.buf),
                }
            } else {
                timeouts += 1;
                self.tcp.on_timeout(next, &mut self.buf);
            }
            self.trace.push((next, self.tcp.cwnd));
            self.send();
        }
        self.now = end;
        timeouts
    }

    /// cwnd at time `t` (the last value set at or before it).
    pub fn cwnd_at(&self, t: SimTime) -> f64 {
        let i = self.trace.partition_point(|&(at, _)| at <= t);
        self.trace[i.max(1) - 1].1
    }
}
