//! Packet capture in the classic pcap format (nanosecond timestamps, LINKTYPE_RAW = IPv4).
//! qoslab packets carry no payload, so each record holds synthesised IPv4 + TCP/UDP headers
//! (DSCP and ECN included) with the original length set to the packet's size on the wire.
//! Node n has address 10.x.y.z with x.y.z = n + 1; flow f uses ports 10000 + f → 20000 + f.

use std::io::{self, Write};

use crate::packet::{PacketKind, PacketMeta};
use crate::traffic::linux::rcv_space::RCV_WSCALE;

pub struct PcapWriter {
    out: Box<dyn Write + Send>,
    buf: Vec<u8>,
    pub records: u64,
}

/// The pcap file header's bytes.
pub const HEADER_BYTES: u64 = 24;

fn addr(node: usize) -> [u8; 4] {
    let n = node as u32 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl PcapWriter {
    pub fn new(mut out: Box<dyn Write + Send>) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond-resolution magic
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            buf: Vec::with_capacity(96),
            records: 0,
        })
    }

    /// The bytes of one record: its 16-byte header, then the IPv4 header and a UDP or TCP one.
    pub fn record_len(udp: bool) -> u64 {
        16 + 20 + if udp { 8 } else { 20 }
    }

    /// Writes one record. `src`/`dst` are the flow's endpoint nodes; `udp` selects the header;
    /// `segment` is the flow's full data packet size (bytes on the wire), which numbers the TCP
    /// sequence space: segment n starts at byte n · (segment − 40), and an ACK of segments up
    /// to n carries (n + 1) · (segment − 40), as a reader of the capture expects. `window` is
    /// the receive window an ACK offers, in bytes (a linux-flavour receiver's), written scaled
    /// by 2^[`RCV_WSCALE`] as the header puts it on the wire; without one (ns-2's agents
    /// advertise none) the field is 65,535.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        t_ns: u64,
        p: &PacketMeta,
        src: usize,
        dst: usize,
        udp: bool,
        segment: u32,
        window: Option<u64>,
    ) -> io::Result<()> {
        let (s, d) = if p.kind == PacketKind::Ack {
            (dst, src)
        } else {
            (src, dst)
        };
        let l4 = if udp { 8 } else { 20 };
        let b = &mut self.buf;
        b.clear();
        let caplen = 20 + l4;
        b.extend_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(caplen as u32).to_le_bytes());
        b.extend_from_slice(&(p.size.max(caplen as u32)).to_le_bytes());
        let start = b.len();
        let total = p.size.clamp(caplen as u32, 65535) as u16;
        b.push(0x45);
        b.push((p.dscp << 2) | (p.ecn & 3));
        b.extend_from_slice(&total.to_be_bytes());
        b.extend_from_slice(&(p.seq as u16).to_be_bytes());
        b.extend_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
        b.push(64);
        b.push(if udp { 17 } else { 6 });
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&addr(s));
        b.extend_from_slice(&addr(d));
        let ck = ip_checksum(&b[start..start + 20]);
        b[start + 10..start + 12].copy_from_slice(&ck.to_be_bytes());
        let (sp, dp) = (
            10000 + (p.flow as u16 % 10000),
            20000 + (p.flow as u16 % 10000),
        );
        let (sp, dp) = if p.kind == PacketKind::Ack {
            (dp, sp)
        } else {
            (sp, dp)
        };
        b.extend_from_slice(&sp.to_be_bytes());
        b.extend_from_slice(&dp.to_be_bytes());
        if udp {
            b.extend_from_slice(&(total - 20).to_be_bytes());
            b.extend_from_slice(&[0, 0]);
        } else {
            let payload = u64::from(crate::packet::tcp_payload_bytes(segment));
            let (seq, ack, flags) = match p.kind {
                PacketKind::Data => (p.seq * payload, 0u64, 0x18u8),
                PacketKind::Ack => (0, ((p.ack + 1).max(0) as u64) * payload, 0x10u8),
            };
            b.extend_from_slice(&(seq as u32).to_be_bytes());
            b.extend_from_slice(&(ack as u32).to_be_bytes());
            b.push(5 << 4);
            b.push(flags);
            let field = window.map_or(65535, |w| (w >> RCV_WSCALE).min(65535) as u16);
            b.extend_from_slice(&field.to_be_bytes());
            b.extend_from_slice(&[0, 0, 0, 0]);
        }
        debug_assert_eq!(b.len() as u64, Self::record_len(udp));
        self.out.write_all(b)?;
        self.records += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
