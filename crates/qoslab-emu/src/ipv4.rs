//! The little of IPv4 (RFC 791), TCP and UDP a link daemon reads and writes: the DS field
//! (RFC 2474) and ECN bits (RFC 3168) in the TOS byte, the header checksum, and the ports
//! and TCP sequence number that identify a flow.

/// What the daemon needs of a real packet's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// Total length (IP header included): the size queues and meters see, as ns-2 counts it.
    pub total_len: u32,
    pub dscp: u8,
    pub ecn: u8,
    /// IP protocol number (6 TCP, 17 UDP).
    pub protocol: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// Source and destination ports (0 for other protocols or a non-first fragment).
    pub sport: u16,
    pub dport: u16,
    /// TCP sequence and acknowledgement numbers and flags (0 for UDP).
    pub tcp_seq: u32,
    pub tcp_ack: u32,
    pub tcp_flags: u8,
}

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;
/// The TCP SYN flag.
pub const SYN: u8 = 0x02;

/// Parses an IPv4 packet's headers; `None` for anything that is not a well-formed IPv4
/// header.
pub fn parse(p: &[u8]) -> Option<Headers> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    if ihl < 20 || p.len() < ihl {
        return None;
    }
    let total_len = u16::from_be_bytes([p[2], p[3]]) as u32;
    let frag_off = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
    let protocol = p[9];
    let l4 = &p[ihl..];
    let (mut sport, mut dport, mut tcp_seq, mut tcp_ack, mut tcp_flags) = (0, 0, 0, 0, 0);
    if frag_off == 0 && (protocol == TCP || protocol == UDP) && l4.len() >= 8 {
        sport = u16::from_be_bytes([l4[0], l4[1]]);
        dport = u16::from_be_bytes([l4[2], l4[3]]);
        if protocol == TCP && l4.len() >= 14 {
            tcp_seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]);
            tcp_ack = u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]]);
            tcp_flags = l4[13];
        }
    }
    Some(Headers {
        total_len,
        dscp: p[1] >> 2,
        ecn: p[1] & 3,
        protocol,
        src: [p[12], p[13], p[14], p[15]],
        dst: [p[16], p[17], p[18], p[19]],
        sport,
        dport,
        tcp_seq,
        tcp_ack,
        tcp_flags,
    })
}

/// The RFC 1071 checksum of an IPv4 header (with its checksum field taken as zero).
pub fn header_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, c) in h.chunks(2).enumerate() {
        if i == 5 {
            continue; // the checksum field itself
        }
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes `dscp` and `ecn` into the TOS byte and recomputes the header checksum. Returns false
/// (and leaves the packet alone) when it already carries them.
pub fn set_ds_field(p: &mut [u8], dscp: u8, ecn: u8) -> bool {
    let tos = (dscp << 2) | (ecn & 3);
    if p.len() < 20 || p[1] == tos {
        return false;
    }
    p[1] = tos;
    let ihl = ((p[0] & 0x0f) as usize * 4).min(p.len());
    let c = header_checksum(&p[..ihl]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal IPv4 + UDP/TCP packet of `total` bytes with a valid header checksum.
    pub fn packet(protocol: u8, tos: u8, sport: u16, dport: u16, total: u16) -> Vec<u8> {
        let mut p = vec![0u8; total as usize];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p[8] = 64;
        p[9] = protocol;
        p[12..16].copy_from_slice(&[10, 99, 0, 1]);
        p[16..20].copy_from_slice(&[10, 99, 0, 2]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        if protocol == TCP {
            p[24..28].copy_from_slice(&123_456u32.to_be_bytes());
        }
        let c = header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    /// A header whose checksum verifies sums (with the checksum field) to 0xffff.
    fn verifies(h: &[u8]) -> bool {
        let mut sum: u32 = h
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    #[test]
    fn checksum_of_the_rfc1071_example_header() {
        // A header from a real capture: 45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01 c0 a8 00 c7
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(header_checksum(&h), 0xb861);
        assert!(verifies(&h));
    }

    #[test]
    fn parse_reads_ds_field_ports_and_sequence() {
        let p = packet(TCP, (10 << 2) | 2, 40000, 5001, 1000);
        let h = parse(&p).unwrap();
        assert_eq!((h.dscp, h.ecn, h.total_len), (10, 2, 1000));
        assert_eq!((h.sport, h.dport, h.tcp_seq), (40000, 5001, 123_456));
        assert!(parse(&p[..10]).is_none());
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert!(parse(&v6).is_none());
    }

    #[test]
    fn rewriting_the_ds_field_keeps_the_checksum_valid() {
        let mut p = packet(UDP, 0, 1, 2, 100);
        assert!(verifies(&p[..20]));
        assert!(set_ds_field(&mut p, 12, 0));
        assert_eq!(p[1], 12 << 2);
        assert!(verifies(&p[..20]));
        assert!(set_ds_field(&mut p, 12, 3));
        assert!(verifies(&p[..20]));
        assert!(!set_ds_field(&mut p, 12, 3), "no change, no rewrite");
    }
}
