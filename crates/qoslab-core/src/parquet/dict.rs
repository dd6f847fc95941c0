//! Dictionary encoding of a column chunk: the dictionary (entries in order of first
//! appearance, told apart by their bits or bytes) and the RLE/bit-packed hybrid encoding of
//! its indices (Encodings.md). The rule for when a column is dictionary-encoded is
//! [`Values::dictionary`](super::Values::dictionary)'s.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::{varint, DICT_PAGE_BYTES};

/// A column chunk's dictionary: its entries, each given as the row where it first appears
/// (entries in order of first appearance), and every row's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dictionary {
    pub first_rows: Vec<usize>,
    pub indices: Vec<u32>,
}

impl Dictionary {
    /// See [`Values::dictionary`]: the `n` `keys` tell the rows' values apart, `entry_bytes` is a
    /// key's PLAIN size, `plain_bytes` the PLAIN size of the whole column.
    pub(super) fn build<K: Hash + Eq + Copy>(
        n: usize,
        keys: impl Iterator<Item = K>,
        entry_bytes: impl Fn(K) -> usize,
        plain_bytes: usize,
    ) -> Option<Dictionary> {
        let mut map: HashMap<K, u32, BuildHasherDefault<KeyHasher>> = HashMap::default();
        let mut first_rows = Vec::new();
        let mut indices = Vec::with_capacity(n);
        let mut dict_bytes = 0;
        let mut prev: Option<(K, u32)> = None;
        for (row, k) in keys.enumerate() {
            let i = match prev {
                // runs of one value are common (a time across queues): no lookup
                Some((p, i)) if p == k => i,
                _ => {
                    let next = first_rows.len() as u32;
                    let i = *map.entry(k).or_insert(next);
                    if i == next {
                        first_rows.push(row);
                        dict_bytes += entry_bytes(k);
                        let index_bytes =
                            (n * usize::from(bit_width(first_rows.len()))).div_ceil(8);
                        if dict_bytes > DICT_PAGE_BYTES || dict_bytes + index_bytes >= plain_bytes {
                            return None;
                        }
                    }
                    prev = Some((k, i));
                    i
                }
            };
            indices.push(i);
        }
        (n > 0).then_some(Dictionary {
            first_rows,
            indices,
        })
    }

    /// The bit width of the indices (at least 1, as pyarrow writes a one-entry dictionary's).
    pub fn bit_width(&self) -> u8 {
        bit_width(self.first_rows.len())
    }
}

/// Bits of an index into a dictionary of `entries` entries: ceil(log2(entries)), at least 1.
pub fn bit_width(entries: usize) -> u8 {
    (usize::BITS - entries.saturating_sub(1).leading_zeros()).max(1) as u8
}

/// The dictionary's hasher: FxHash's multiply-rotate over 8-byte words, finished by
/// MurmurHash3's fmix64 so that keys differing only in their high bits (floats such as 1.0,
/// 2.0, 3.0) spread over the table's low bits. (std's SipHash is several times slower; a
/// dictionary's order does not depend on the hasher.)
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Appends `v` in the RLE/bit-packed hybrid encoding at bit width `width` (Encodings.md; a
/// dictionary data page puts the width in one byte in front): a run of 8 or more equal values
/// is an RLE run (header `len << 1` as a varint, the value in ceil(width / 8) bytes, little
/// endian); other values go into bit-packed runs (header `groups << 1 | 1`, then groups of 8
/// values packed from the least significant bit). A bit-packed run counts whole groups, so
/// before an RLE run the pending values are completed to a multiple of 8 with the run's first
/// values (the run stays RLE only if 8 or more are left); only the last group of all is
/// padded with 0s, which the reader ignores (it knows the page's number of values).
pub fn hybrid(v: &[u32], width: u8, out: &mut Vec<u8>) {
    let value_bytes = usize::from(width).div_ceil(8);
    let (mut pending, mut i) = (0, 0);
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        let fill = (8 - (i - pending) % 8) % 8;
        if j - i >= fill + 8 {
            bit_packed(&v[pending..i + fill], width, out);
            varint(((j - i - fill) as u64) << 1, out);
            out.extend_from_slice(&v[i].to_le_bytes()[..value_bytes]);
            pending = j;
        }
        i = j;
    }
    bit_packed(&v[pending..], width, out);
}

/// One bit-packed run of `v` (nothing if `v` is empty), its last group padded with 0s.
fn bit_packed(v: &[u32], width: u8, out: &mut Vec<u8>) {
    if v.is_empty() {
        return;
    }
    let groups = v.len().div_ceil(8);
    varint(((groups as u64) << 1) | 1, out);
    let (mut acc, mut bits) = (0u64, 0u8);
    for k in 0..groups * 8 {
        acc |= u64::from(v.get(k).copied().unwrap_or(0)) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    // 8 values of `width` bits are `width` whole bytes: nothing is left over
}
