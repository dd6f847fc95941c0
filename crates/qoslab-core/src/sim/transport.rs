//! The glue between the network and the endpoints: TCP senders and sinks (ACKs, timers),
//! the open-loop sources of the source registry.

use super::{Endpoint, Simulation};
use crate::engine::EventKind;
use crate::packet::{PacketId, PacketKind, PacketMeta, CWR, ECE};
use crate::traffic::sink::{SackBlocks, SinkAction};
use crate::traffic::tcp::SendBuf;
use crate::units::SimTime;

/// The blocks of an ACK that carries none.
const NO_SACK_BLOCKS: SackBlocks = [(0, 0); 3];

impl Simulation {
    pub(super) fn deliver(&mut self, now: SimTime, id: PacketId) {
        let p = self.arena.free(id);
        let fi = p.flow as usize;
        let in_window = self.in_window;
        match p.kind {
            PacketKind::Data => {
                let flow = &mut self.flows[fi];
                flow.stats.delivered_pkts += 1;
                flow.stats.delivered_bytes += p.size as u64;
                flow.ts_recent_data = p.created_at;
                if p.ecn & 3 == 3 {
                    flow.stats.ecn_marks += 1;
                }
                flow.delay.on_packet(p.created_at, now, in_window);
                if in_window {
                    flow.stats.window_delivered_bytes += p.size as u64;
                    if crate::ds::drop_precedence(p.dscp) == 0 {
                        flow.stats.window_delivered_in_bytes += p.size as u64;
                    }
                }
                if self.at_receiver {
                    flow.stats.bin_bytes += p.size as u64;
                }
                // DCTCP's receiver (RFC 8257 §3.2): a change of CE state first sends the held
                // delayed ACK, with the old state.
                let flush = match &mut flow.ep {
                    Endpoint::Tcp {
                        sink, ecn: true, ..
                    } => sink.dctcp_ce_change(p.ecn & 3 == 3),
                    _ => false,
                };
                if flush {
                    self.send_ack(now, fi);
                }
                let flow = &mut self.flows[fi];
                if let Endpoint::Tcp {
                    sink,
                    delack_gen,
                    delack_interval,
                    delack_queued,
                    delack_due,
                    ecn,
                    ..
                } = &mut flow.ep
                {
                    let before = sink.goodput_pkts;
                    if *ecn {
                        sink.on_ecn(
                            p.ecn & 3 != 0,
                            p.ecn & 3 == 3,
                            p.tcp_flags & CWR != 0,
                            p.tcp_flags & ECE != 0,
                        );
                    }
                    let action = sink.on_arrival(p.seq, now, p.size);
                    if in_window {
                        flow.stats.window_goodput_pkts += sink.goodput_pkts - before;
                    }
                    match action {
                        SinkAction::AckNow => {
                            *delack_gen = delack_gen.wrapping_add(1);
                            self.send_ack(now, fi);
                        }
                        SinkAction::Delay => {
                            // The timer for this held ACK takes its place in the event order
                            // now (a reserved sequence number) but is scheduled only when no
                            // earlier one is pending; that one, firing, schedules it.
                            *delack_gen = delack_gen.wrapping_add(1);
                            let (g, at) = (*delack_gen, now + *delack_interval);
                            let seq = self.q.reserve();
                            *delack_due = (at, seq, g);
                            if !*delack_queued {
                                *delack_queued = true;
                                self.q.at_reserved(at, seq, EventKind::DelAck(fi as u32, g));
                            }
                        }
                    }
                }
            }
            PacketKind::Ack => {
                let flow = &mut self.flows[fi];
                flow.stats.acks_delivered += 1;
                flow.ts_recent_ack = p.created_at;
                if let Endpoint::Tcp { sender, sink, .. } = &mut flow.ep {
                    let mut buf = std::mem::take(&mut self.buf);
                    let ece = p.tcp_flags & ECE != 0;
                    // The ACK's SACK blocks, kept beside the packet when its receiver puts
                    // them on (see `send_ack`).
                    let blocks = if sink.sends_sack() {
                        &self.sack_blocks[id]
                    } else {
                        &NO_SACK_BLOCKS
                    };
                    if sink.offers_window() {
                        if let Some(&w) = self.ack_windows.get(id) {
                            sender.set_send_window(p.ack, w);
                        }
                    }
                    sender.on_ack(now, p.ack, ece, blocks, &mut buf);
                    self.transmit_tcp(now, fi, &mut buf);
                    self.buf = buf;
                    if self.flows[fi].transfer.is_some() {
                        self.check_transfer(now, fi);
                    }
                }
            }
        }
    }

    pub(super) fn send_ack(&mut self, now: SimTime, fi: usize) {
        let flow = &mut self.flows[fi];
        let Endpoint::Tcp {
            sink,
            ack_size,
            ecn,
            ..
        } = &mut flow.ep
        else {
            return;
        };
        let mut p = PacketMeta::new(fi as u32, PacketKind::Ack, *ack_size, 0, now);
        p.ack = sink.ackno();
        if *ecn && sink.take_ece() {
            p.tcp_flags |= ECE;
        }
        p.ts_echo = flow.ts_recent_data;
        p.at = flow.rev_at;
        flow.stats.acks_sent += 1;
        let first = self.routes[p.at as usize] as usize;
        let blocks = sink.sack_blocks();
        // the window a linux receiver offers, in a side table as the SACK blocks: every such
        // ACK writes its entry, so none reads a former packet's
        let window = sink.select_window();
        let id = self.arena.alloc(p);
        if let Some(w) = window {
            if self.ack_windows.len() <= id {
                self.ack_windows.resize(id + 1, u32::MAX);
            }
            self.ack_windows[id] = w;
        }
        if let Some(b) = blocks {
            // SACK blocks live in a side table indexed by packet id, written only for SACK
            // flows' ACKs, so `PacketMeta` stays as small as every packet needs; it grows
            // with the arena, not per packet.
            if self.sack_blocks.len() <= id {
                self.sack_blocks.resize(id + 1, [(0, 0); 3]);
            }
            self.sack_blocks[id] = b;
        }
        self.send_on(now, first, id);
    }

    pub(super) fn transmit_tcp(&mut self, now: SimTime, fi: usize, buf: &mut SendBuf) {
        let (size, dscp) = {
            let f = &self.flows[fi];
            (f.size, f.dscp)
        };
        let (ecn, syn, negotiates) = match &self.flows[fi].ep {
            Endpoint::Tcp { ecn, sender, .. } => (*ecn, sender.syn(), sender.negotiates_ecn()),
            Endpoint::Udp { .. } => (false, false, false),
        };
        for (seq, rtx, cwr) in buf.drain(..) {
            // ns-2's SYN is a 40-byte segment 0.
            let size = if syn && seq == 0 { 40 } else { size };
            let mut p = PacketMeta::new(fi as u32, PacketKind::Data, size, seq, now);
            p.dscp = dscp;
            p.retransmit = rtx;
            p.ts_echo = self.flows[fi].ts_recent_ack;
            if ecn {
                // ECT(0) on data; segment 0 carries ns-2's negotiation instead (ECE, not ECT)
                // where the sender negotiates (the linux flavour models no handshake: the
                // flow starts negotiated).
                if seq == 0 && negotiates {
                    p.tcp_flags |= ECE;
                } else {
                    p.ecn = 2;
                }
                if cwr {
                    p.tcp_flags |= CWR;
                }
            }
            if rtx {
                self.flows[fi].stats.retransmits += 1;
            }
            self.emit(now, fi, p);
        }
        self.sync_rto(fi);
        if let Endpoint::Tcp { sender, .. } = &mut self.flows[fi].ep {
            if let Some(at) = sender.pacer_mut().request() {
                self.q.at(at, EventKind::Pace(fi as u32));
            }
        }
    }

    /// A paced sender's timer: release what the window and the pacing rate allow.
    pub(super) fn on_pace(&mut self, now: SimTime, fi: usize) {
        let Endpoint::Tcp { sender, .. } = &mut self.flows[fi].ep else {
            return;
        };
        if !sender.pacer_mut().on_event(now) {
            return; // stale
        }
        let mut buf = std::mem::take(&mut self.buf);
        sender.on_pace(now, &mut buf);
        self.transmit_tcp(now, fi, &mut buf);
        self.buf = buf;
    }

    /// Makes sure a heap event exists no later than the sender's retransmission deadline.
    pub(super) fn sync_rto(&mut self, fi: usize) {
        if let Endpoint::Tcp {
            sender,
            rto_scheduled,
            ..
        } = &mut self.flows[fi].ep
        {
            if let Some(dl) = sender.rtx_deadline() {
                if rto_scheduled.is_none_or(|s| dl < s) {
                    *rto_scheduled = Some(dl);
                    self.q.at(dl, EventKind::Rto(fi as u32));
                }
            }
        }
    }

    pub(super) fn on_rto(&mut self, now: SimTime, fi: usize) {
        let Endpoint::Tcp {
            sender,
            rto_scheduled,
            ..
        } = &mut self.flows[fi].ep
        else {
            return;
        };
        if *rto_scheduled != Some(now) {
            return; // superseded by an earlier event
        }
        *rto_scheduled = None;
        match sender.rtx_deadline() {
            Some(dl) if dl <= now => {
                let mut buf = std::mem::take(&mut self.buf);
                sender.on_timeout(now, &mut buf);
                self.transmit_tcp(now, fi, &mut buf);
                self.buf = buf;
            }
            Some(dl) => {
                *rto_scheduled = Some(dl);
                self.q.at(dl, EventKind::Rto(fi as u32));
            }
            None => {}
        }
    }

    /// The delayed-ACK event of generation `g` fires: the held ACK goes if no segment came
    /// since (the generation is current) and it is still held. Otherwise, when a later held
    /// ACK's timer is still live (its generation current), that timer is scheduled at its own
    /// deadline and reserved place in the order: the event it stands for in a queue with one
    /// event per held ACK, found stale or not at the same moment. Events whose generation is
    /// no longer current would do nothing and are never scheduled.
    pub(super) fn on_delack(&mut self, now: SimTime, fi: usize, g: u32) {
        let Endpoint::Tcp {
            sink,
            delack_gen,
            delack_queued,
            delack_due,
            ..
        } = &mut self.flows[fi].ep
        else {
            return;
        };
        *delack_queued = false;
        if *delack_gen != g {
            let (at, seq, due) = *delack_due;
            if due == *delack_gen && due != g {
                *delack_queued = true;
                self.q
                    .at_reserved(at, seq, EventKind::DelAck(fi as u32, due));
            }
            return;
        }
        if !sink.pending {
            return;
        }
        sink.pending = false;
        self.send_ack(now, fi);
    }

    // --- sources ---------------------------------------------------------------------

    pub(super) fn on_flow_start(&mut self, now: SimTime, fi: usize) {
        if let Some(size) = self.scenario.flows[fi].size_bytes {
            self.begin_transfer(now, fi, u32::MAX, fi as u64, size);
            return;
        }
        match &mut self.flows[fi].ep {
            Endpoint::Tcp { sender, .. } => {
                let mut buf = std::mem::take(&mut self.buf);
                sender.start(now, &mut buf);
                self.transmit_tcp(now, fi, &mut buf);
                self.buf = buf;
            }
            Endpoint::Udp { src, send_pending } => {
                src.active = true;
                src.on = true;
                if let Some(p) = src.period(true) {
                    self.q.at(now + p, EventKind::UdpToggle(fi as u32));
                }
                let first = match &src.trace {
                    Some(rows) => now + rows[0].at_ns,
                    None => now,
                };
                *send_pending = true;
                self.q.at(first, EventKind::UdpSend(fi as u32));
            }
        }
    }

    pub(super) fn on_flow_stop(&mut self, fi: usize) {
        match &mut self.flows[fi].ep {
            Endpoint::Tcp { sender, .. } => sender.stop(),
            Endpoint::Udp { src, .. } => src.active = false,
        }
    }

    pub(super) fn on_udp_send(&mut self, now: SimTime, fi: usize) {
        let (dscp, start) = {
            let f = &self.flows[fi];
            (f.dscp, f.start)
        };
        let Endpoint::Udp { src, send_pending } = &mut self.flows[fi].ep else {
            return;
        };
        *send_pending = false;
        if !src.active || !src.on {
            return;
        }
        let packet_size = match &src.trace {
            Some(rows) => {
                let row = rows[src.next_row];
                src.next_row += 1;
                // The rows' times are offsets from the flow's start: the next one is due at
                // start + its offset (the same instant for rows with equal times).
                if let Some(next) = rows.get(src.next_row) {
                    *send_pending = true;
                    self.q.at(start + next.at_ns, EventKind::UdpSend(fi as u32));
                }
                row.size
            }
            None => {
                let gap = src.next_gap();
                *send_pending = true;
                self.q.at(now + gap, EventKind::UdpSend(fi as u32));
                src.next_size()
            }
        };
        let mut p = PacketMeta::new(fi as u32, PacketKind::Data, packet_size, src.seq, now);
        p.dscp = dscp;
        src.seq += 1;
        self.emit(now, fi, p);
    }

    /// A source emits a data packet onto the first link of its route: count it and send it.
    #[inline]
    pub(super) fn emit(&mut self, now: SimTime, fi: usize, mut p: PacketMeta) {
        let size = p.size as u64;
        p.at = self.flows[fi].fwd_at;
        let first = self.routes[p.at as usize] as usize;
        let st = &mut self.flows[fi].stats;
        st.sent_pkts += 1;
        st.sent_bytes += size;
        if self.in_window {
            st.window_sent_bytes += size;
        }
        if !self.at_receiver {
            st.bin_bytes += size;
        }
        let id = self.arena.alloc(p);
        self.send_on(now, first, id);
    }

    pub(super) fn on_udp_toggle(&mut self, now: SimTime, fi: usize) {
        let Endpoint::Udp { src, send_pending } = &mut self.flows[fi].ep else {
            return;
        };
        if !src.active {
            return;
        }
        src.on = !src.on;
        let p = src
            .period(src.on)
            .expect("only a source with periods toggles");
        self.q.at(now + p, EventKind::UdpToggle(fi as u32));
        if src.on && !*send_pending {
            *send_pending = true;
            self.q.at(now, EventKind::UdpSend(fi as u32));
        }
    }
}
