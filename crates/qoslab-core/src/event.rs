//! What the event queue ([`crate::engine::EventQueue`]) holds: the kinds of event and their
//! operands, encoded into a tag and two 32-bit operands so that a queue entry is 24 bytes.

use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Multi-queue link direction `0` finishes a transmission (its scheduler picks the next).
    TxDone(u32),
    /// The packet at the head of link direction `0`'s propagation pipe reaches the far node;
    /// `1` is that packet's id (the link's line is authoritative; the id lets the loop
    /// prefetch the packet before the event is handled).
    Arrive(u32, u32),
    /// A flow starts sending.
    FlowStart(u32),
    /// A flow stops sending.
    FlowStop(u32),
    /// A UDP source's next packet.
    UdpSend(u32),
    /// A UDP ON/OFF source toggles state.
    UdpToggle(u32),
    /// TCP retransmission timer of flow `0` (checked against the sender's deadline).
    Rto(u32),
    /// Delayed-ACK timer of flow `0`'s sink, generation `1`.
    DelAck(u32, u32),
    /// The timer of conditioner `0`'s meter fires ([`crate::conditioner::Meter::on_timer`]).
    Timer(u32),
    /// A signal reaches the queue of signal route `0` (`sim::signals`); `1` is the value, as
    /// `f32` bits (it keeps the event entry small).
    Signal(u32, u32),
    /// Take a time-series sample.
    Sample,
    /// Open or close the measurement window.
    MeasureStart,
    MeasureEnd,
    /// The next flow of arrival process `0` arrives.
    FlowArrival(u32),
    /// Flow `0`'s paced sender may release its next segment (checked against the sender's
    /// pacing time; at most one pending per flow).
    Pace(u32),
}

impl EventKind {
    /// (tag, first operand, second operand).
    #[inline(always)]
    pub(crate) fn encode(self) -> (u8, u32, u32) {
        match self {
            EventKind::TxDone(a) => (0, a, 0),
            EventKind::Arrive(a, b) => (1, a, b),
            EventKind::FlowStart(a) => (2, a, 0),
            EventKind::FlowStop(a) => (3, a, 0),
            EventKind::UdpSend(a) => (4, a, 0),
            EventKind::UdpToggle(a) => (5, a, 0),
            EventKind::Rto(a) => (6, a, 0),
            EventKind::DelAck(a, b) => (7, a, b),
            EventKind::Timer(a) => (8, a, 0),
            EventKind::Signal(a, b) => (9, a, b),
            EventKind::Sample => (10, 0, 0),
            EventKind::MeasureStart => (11, 0, 0),
            EventKind::MeasureEnd => (12, 0, 0),
            EventKind::FlowArrival(a) => (13, a, 0),
            EventKind::Pace(a) => (14, a, 0),
        }
    }
    #[inline(always)]
    pub(crate) fn decode(tag: u8, a: u32, b: u32) -> EventKind {
        match tag {
            0 => EventKind::TxDone(a),
            1 => EventKind::Arrive(a, b),
            2 => EventKind::FlowStart(a),
            3 => EventKind::FlowStop(a),
            4 => EventKind::UdpSend(a),
            5 => EventKind::UdpToggle(a),
            6 => EventKind::Rto(a),
            7 => EventKind::DelAck(a, b),
            8 => EventKind::Timer(a),
            9 => EventKind::Signal(a, b),
            10 => EventKind::Sample,
            11 => EventKind::MeasureStart,
            13 => EventKind::FlowArrival(a),
            14 => EventKind::Pace(a),
            // 12: only encode() writes tags (every kind round-trips in a test); a checked
            // arm for the impossible rest cost 0.6 % of the 5-flow run's instructions.
            _ => EventKind::MeasureEnd,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub time: SimTime,
    pub kind: EventKind,
}
