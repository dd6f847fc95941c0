//! Packets: metadata only (no payload bytes), stored in an arena and moved by id.
//! The arena reuses freed slots, so after warm-up no packet causes a heap allocation.

pub type PacketId = usize;

/// The largest packet on a wire, bytes: an IP packet's. Every size a packet is made with is
/// within it: the scenario refuses larger flows', ACKs' and traces' sizes with one line, size
/// distributions are clamped to it, and the emulator's packets carry a 16-bit IP length. A
/// link's line keeps sizes in 16 bits on that ground (`net::link::InLine`); checking it on
/// every packet cost the 200-flow run 0.7 % more instructions (docs/performance.md,
/// thirteenth round).
pub const MAX_PACKET_BYTES: u32 = 65_535;

/// A TCP segment's headers, bytes: IPv4 and TCP without options, as packet sizes count them.
pub const TCP_IP_HEADER_BYTES: u32 = 40;

/// The payload of a TCP segment of `size` bytes on the wire (at least one byte).
pub fn tcp_payload_bytes(size: u32) -> u32 {
    size.saturating_sub(TCP_IP_HEADER_BYTES).max(1)
}

/// TCP ECN-Echo (RFC 3168 §6.1): on an ACK, the receiver saw CE and has not yet seen CWR; on
/// segment 0 of an ECN-capable sender (not ECT), ns-2's ECN negotiation.
pub const ECE: u8 = 1;
/// TCP Congestion Window Reduced: the sender has reduced its window (on its next segment).
pub const CWR: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// A TCP data segment or a UDP datagram, travelling source → destination.
    Data,
    /// A TCP acknowledgement, travelling destination → source.
    Ack,
}

/// What queues, meters and the transport see of a packet.
///
/// One cache line, aligned to it: 58 bytes of fields would otherwise straddle two lines in
/// three arena slots out of four (cachegrind, 200 flows: 11 % fewer L1 misses, 5 % fewer L2
/// misses, 1 % more instructions).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub struct PacketMeta {
    pub flow: u32,
    pub kind: PacketKind,
    /// Size on the wire in bytes (IP header included, as ns-2 counts it).
    pub size: u32,
    /// TCP: sequence number of a data segment, in packets from 0. UDP: datagram counter.
    pub seq: u64,
    /// TCP acknowledgements: the highest in-order sequence number received (cumulative).
    pub ack: i64,
    /// Position of the link direction the packet is on in the simulation's route table
    /// (its route, then the end of it, follow).
    pub at: u32,
    /// DiffServ codepoint (6 bits).
    pub dscp: u8,
    /// ECN field (RFC 3168): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Drop precedence at the current queue (0 = AFx1/IN, 1 = AFx2, 2 = AFx3/OUT), set by the
    /// queue host from the DSCP through its PHB mapping before the discipline decides.
    pub prec: u8,
    /// True for a TCP retransmission (bookkeeping only; queues must not look at it).
    pub retransmit: bool,
    /// TCP header flags used by ECN (RFC 3168): [`ECE`] and [`CWR`].
    pub tcp_flags: u8,
    /// When the packet entered its current queue (ns).
    pub enqueued_at: u64,
    /// When the sender created the packet (ns); for pcap and delay statistics. Also the
    /// packet's TCP timestamp value (RFC 7323 TSval).
    pub created_at: u64,
    /// TCP timestamp echo (RFC 7323 TSecr): an ACK echoes the TSval of the latest data packet
    /// its receiver got, a data packet the TSval of the latest ACK its sender got (0: none).
    pub ts_echo: u64,
}

impl PacketMeta {
    pub fn new(flow: u32, kind: PacketKind, size: u32, seq: u64, now: u64) -> Self {
        debug_assert!(size <= MAX_PACKET_BYTES, "a packet of {size} bytes");
        PacketMeta {
            flow,
            kind,
            size,
            seq,
            ack: 0,
            at: 0,
            dscp: 0,
            ecn: 0,
            prec: 0,
            retransmit: false,
            tcp_flags: 0,
            enqueued_at: now,
            created_at: now,
            ts_echo: 0,
        }
    }
}

/// The packets in flight, indexed by [`PacketId`]. Freed slots are reused last-freed-first,
/// so after warm-up no packet causes an allocation. A slot's address is known without
/// reading it, which lets the simulator prefetch the packet an upcoming event will touch
/// ([`PacketArena::prefetch`]).
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<PacketMeta>,
    live: Vec<bool>,
    free: Vec<PacketId>,
}

impl PacketArena {
    pub fn with_capacity(n: usize) -> Self {
        PacketArena {
            slots: Vec::with_capacity(n),
            live: Vec::with_capacity(n),
            free: Vec::new(),
        }
    }
    #[inline]
    pub fn alloc(&mut self, p: PacketMeta) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id] = p;
                self.live[id] = true;
                id
            }
            None => self.push(p),
        }
    }
    /// A new slot: the arena grows (during the warm-up only, out of the hop's line), by an
    /// eighth of what it holds ([`Self::grown`]).
    #[cold]
    #[inline(never)]
    fn push(&mut self, p: PacketMeta) -> PacketId {
        // Ids fit in 32 bits (a link's line keeps them so: `InLine`). 2³² packets in flight
        // would take 256 GiB of slots alone: memory runs out long before.
        assert!(
            self.slots.len() < u32::MAX as usize,
            "2^32 packets in flight"
        );
        if self.slots.len() == self.slots.capacity() {
            let cap = Self::grown(self.slots.len());
            self.slots.reserve_exact(cap - self.slots.len());
            self.live.reserve_exact(cap - self.live.len());
        }
        self.slots.push(p);
        self.live.push(true);
        self.slots.len() - 1
    }
    #[inline]
    pub fn free(&mut self, id: PacketId) -> PacketMeta {
        assert!(self.live[id], "packet {id} freed twice");
        self.live[id] = false;
        self.free.push(id);
        self.slots[id]
    }
    #[inline]
    pub fn get(&self, id: PacketId) -> &PacketMeta {
        debug_assert!(self.live[id], "packet {id} is not in flight");
        &self.slots[id]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut PacketMeta {
        debug_assert!(self.live[id], "packet {id} is not in flight");
        &mut self.slots[id]
    }
    /// Asks the CPU to start loading packet `id`'s slot into the cache (no effect on results;
    /// `id` need not be valid).
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        crate::prefetch::read(self.slots.as_ptr().wrapping_add(id));
    }
    /// Packet `id`'s slot, live or not (for prefetching what it will touch; None past the
    /// arena).
    #[inline(always)]
    pub fn peek(&self, id: PacketId) -> Option<&PacketMeta> {
        self.slots.get(id)
    }
    /// The packets in flight, by id.
    pub fn live(&self) -> impl Iterator<Item = &PacketMeta> {
        self.slots
            .iter()
            .zip(&self.live)
            .filter(|(_, &l)| l)
            .map(|(p, _)| p)
    }
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// Bytes per packet slot: metadata, liveness flag, free-list entry.
    pub const SLOT_BYTES: usize = std::mem::size_of::<PacketMeta>()
        + std::mem::size_of::<bool>()
        + std::mem::size_of::<PacketId>();
    /// Heap memory held (allocated capacity), bytes.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<PacketMeta>()
            + self.live.capacity()
            + self.free.capacity() * std::mem::size_of::<PacketId>()
    }
    /// The capacity a full arena of `len` slots grows to: an eighth more, at least
    /// [`Self::GROW_MIN`] slots. A `Vec` doubles: the arena's capacity was the most packets
    /// alive at once rounded up to a power of two (131,072 slots for 101,105 at 10,000 flows;
    /// 1,048,576 at 50,000 for little more than half of it), up to twice what it needs, for
    /// the whole run. Growing by an eighth keeps it within 12.5 % of the most alive; the
    /// copies it costs (about 60 growths from 1,024 slots to a million, each moving what the
    /// arena holds) come during the warm-up only.
    pub fn grown(len: usize) -> usize {
        len + (len / 8).max(Self::GROW_MIN)
    }
    /// The fewest slots the arena grows by.
    pub const GROW_MIN: usize = 1024;
    /// Slots ever used: the most packets alive at once.
    pub fn slots_used(&self) -> usize {
        self.slots.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u64) -> PacketMeta {
        PacketMeta::new(0, PacketKind::Data, 1000, seq, 0)
    }

    #[test]
    fn the_arena_grows_by_an_eighth_not_by_doubling() {
        let mut a = PacketArena::with_capacity(1024);
        for n in 0..300_000u64 {
            a.alloc(pkt(n));
            let used = a.slots_used();
            let cap = a.slots.capacity();
            // never more than an eighth (or the least step) above the most alive
            assert!(cap <= PacketArena::grown(used), "{cap} slots for {used}");
            assert!(a.live.capacity() <= cap + PacketArena::GROW_MIN);
        }
        // doubling would hold 2^19 = 524,288 slots for these 300,000
        assert!(a.slots.capacity() < 340_000, "{}", a.slots.capacity());
    }

    #[test]
    fn freed_slots_are_reused_last_freed_first() {
        let mut a = PacketArena::with_capacity(4);
        let ids: Vec<PacketId> = (0..2000).map(|n| a.alloc(pkt(n))).collect();
        assert_eq!(ids, (0..2000).collect::<Vec<_>>());
        a.free(5);
        a.free(1700);
        assert_eq!(a.alloc(pkt(9)), 1700);
        assert_eq!(a.alloc(pkt(9)), 5);
        assert_eq!(a.alloc(pkt(9)), 2000);
        assert_eq!(a.get(1700).seq, 9);
        assert_eq!(a.len(), 2001);
    }
}
