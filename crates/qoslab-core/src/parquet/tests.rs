//! Tests of the writer: encodings against hand-computed bytes and the file's invariants (its
//! reading back is tested against pyarrow, tests/test_parquet.py).

use super::*;

#[test]
fn page_header_bytes() {
    // 3 doubles: definition levels 4 + 2 bytes, values 24
    assert_eq!(
        page_header(3, 30, code::PLAIN),
        [
            0x15, 0x00, // type DATA_PAGE
            0x15, 0x3c, // uncompressed_page_size 30
            0x15, 0x3c, // compressed_page_size 30
            0x2c, // 5: data_page_header
            0x15, 0x06, // num_values 3
            0x15, 0x00, // PLAIN
            0x15, 0x06, // definition levels RLE
            0x15, 0x06, // repetition levels RLE
            0x00, 0x00
        ]
    );
}

#[test]
fn definition_levels_are_one_run_of_ones() {
    let mut o = Vec::new();
    definition_levels(3, &mut o);
    assert_eq!(o, [2, 0, 0, 0, 0x06, 0x01]);
    o.clear();
    definition_levels(100, &mut o); // 200 = 0xc8 0x01
    assert_eq!(o, [3, 0, 0, 0, 0xc8, 0x01, 0x01]);
    o.clear();
    definition_levels(0, &mut o);
    assert_eq!(o, [0, 0, 0, 0]);
}

#[test]
fn plain_encodings() {
    let mut o = Vec::new();
    let bools = [
        true, false, true, true, false, false, false, false, true, true,
    ];
    Values::Bool(&bools).plain(0..10, &mut o);
    assert_eq!(o, [0b0000_1101, 0b0000_0011]);
    o.clear();
    Values::I8(&[-1, 2]).plain(0..2, &mut o);
    assert_eq!(o, [0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0]);
    o.clear();
    Values::U32(&[u32::MAX]).plain(0..1, &mut o);
    assert_eq!(o, [0xff; 4]);
    o.clear();
    Values::U16(&[0xffff]).plain(0..1, &mut o);
    assert_eq!(o, [0xff, 0xff, 0, 0]);
    o.clear();
    let s: Strings = ["", "é", "ab"].into_iter().collect();
    Values::Utf8(&s).plain(1..3, &mut o);
    assert_eq!(o, [2, 0, 0, 0, 0xc3, 0xa9, 2, 0, 0, 0, b'a', b'b']);
}

#[test]
fn pages_are_bounded_and_cover_every_row() {
    let n = PAGE_BYTES / 8 * 2 + 5;
    let v = vec![0.5f64; n];
    let p = Values::F64(&v).pages();
    assert_eq!(p, [(0, n / 2 - 2), (n / 2 - 2, n - 5), (n - 5, n)]);
    assert_eq!(Values::F64(&[]).pages(), [(0, 0)]);
    let big = "x".repeat(PAGE_BYTES / 3);
    let s: Strings = std::iter::repeat_n(big.as_str(), 7).collect();
    let p = Values::Utf8(&s).pages();
    assert_eq!(p, [(0, 3), (3, 6), (6, 7)]);
    assert_eq!(Values::Utf8(&Strings::default()).pages(), [(0, 0)]);
    let one: Strings = [String::from("a")].into_iter().collect();
    assert_eq!(Values::Utf8(&one).pages(), [(0, 1)]);
}

#[test]
fn file_layout() {
    let names: Strings = ["a", "b"].into_iter().collect();
    let cols = [
        Column {
            name: "x",
            values: Values::U64(&[1, 2]),
        },
        Column {
            name: "s",
            values: Values::Utf8(&names),
        },
    ];
    let meta = vec![("k".to_string(), "v".to_string())];
    let mut buf = Vec::new();
    let n = write_to(&mut buf, &cols, &meta).unwrap();
    assert_eq!(n as usize, buf.len());
    assert_eq!(&buf[..4], b"PAR1");
    assert_eq!(&buf[buf.len() - 4..], b"PAR1");
    let footer_len =
        u32::from_le_bytes(buf[buf.len() - 8..buf.len() - 4].try_into().unwrap()) as usize;
    let footer = &buf[buf.len() - 8 - footer_len..buf.len() - 8];
    // both columns are all distinct: PLAIN (a dictionary would not be smaller)
    let page_x = page_header(2, 6 + 16, code::PLAIN);
    let page_s = page_header(2, 6 + 10, code::PLAIN);
    assert_eq!(&buf[4..4 + page_x.len()], page_x.as_slice());
    let at_s = 4 + page_x.len() + 22;
    assert_eq!(&buf[at_s..at_s + page_s.len()], page_s.as_slice());
    assert_eq!(
        4 + page_x.len() + 22 + page_s.len() + 16 + footer_len + 8,
        buf.len()
    );
    // the footer is FileMetaData: version 2, then the schema list of 3 structs
    assert_eq!(&footer[..4], [0x15, 0x04, 0x19, 0x3c]);
    let by = CREATED_BY.as_bytes();
    assert!(footer.windows(by.len()).any(|w| w == by));
}

#[test]
fn column_lengths_that_differ_are_an_error() {
    let cols = [
        Column {
            name: "x",
            values: Values::U64(&[1, 2]),
        },
        Column {
            name: "y",
            values: Values::Bool(&[true]),
        },
    ];
    let e = write_to(Vec::new(), &cols, &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column `y` has 1 values where column `x` has 2"
    );
}

#[test]
fn io_errors_name_the_path() {
    let path = Path::new("/nonexistent-dir-qoslab/t.parquet");
    let e = write_table(path, &[], &[]).unwrap_err();
    assert!(matches!(e, ParquetError::Io { .. }));
    assert!(
        e.to_string()
            .starts_with("/nonexistent-dir-qoslab/t.parquet: "),
        "{e}"
    );
}

#[test]
fn schema_types_are_pyarrows() {
    let int = |bits, signed| Some(Annotation::Integer { bits, signed });
    assert_eq!(Values::U64(&[]).schema_type().annotation, int(64, false));
    assert_eq!(Values::U64(&[]).schema_type().physical, code::INT64);
    assert_eq!(Values::I64(&[]).schema_type().annotation, None);
    assert_eq!(Values::U8(&[]).schema_type().physical, code::INT32);
    assert_eq!(
        Values::Utf8(&Strings::default()).schema_type().annotation,
        Some(Annotation::String)
    );
}

#[test]
fn dictionary_page_header_bytes() {
    assert_eq!(
        dictionary_page_header(3, 24),
        [
            0x15, 0x04, // type DICTIONARY_PAGE
            0x15, 0x30, // uncompressed_page_size 24
            0x15, 0x30, // compressed_page_size 24
            0x4c, // 7: dictionary_page_header
            0x15, 0x06, // num_values 3
            0x15, 0x00, // PLAIN
            0x00, 0x00
        ]
    );
    assert_eq!(page_header(3, 9, code::RLE_DICTIONARY)[10], 0x10); // encoding 8
}

fn hybrid_bytes(v: &[u32], width: u8) -> Vec<u8> {
    let mut o = Vec::new();
    hybrid(v, width, &mut o);
    o
}

#[test]
fn hybrid_bit_packed_runs() {
    // Encodings.md's example: 0..=7 at bit width 3 are 10001000 11000110 11111010
    assert_eq!(
        hybrid_bytes(&[0, 1, 2, 3, 4, 5, 6, 7], 3),
        [0x03, 0x88, 0xc6, 0xfa]
    );
    // 3 values: one group, padded with 0s (the reader knows how many values there are)
    assert_eq!(hybrid_bytes(&[1, 0, 1], 1), [0x03, 0b101]);
    // a run of fewer than 8 is bit-packed
    assert_eq!(hybrid_bytes(&[2; 7], 2), [0x03, 0xaa, 0x2a]);
    assert_eq!(hybrid_bytes(&[], 1), []);
    // 1024 values alternating: 128 groups, the header 128 << 1 | 1 = 257 a 2-byte varint
    let alt: Vec<u32> = (0..1024).map(|i| i % 2).collect();
    let o = hybrid_bytes(&alt, 1);
    assert_eq!(&o[..2], [0x81, 0x02]);
    assert_eq!(&o[2..], [0xaa; 128]);
}

#[test]
fn hybrid_rle_runs() {
    // 10 fives: header 10 << 1, the value in one byte
    assert_eq!(hybrid_bytes(&[5; 10], 3), [0x14, 0x05]);
    // bit width 9: the value in 2 bytes
    assert_eq!(hybrid_bytes(&[300; 8], 9), [0x10, 0x2c, 0x01]);
    // bit width 1 of a one-entry dictionary: a run of 0s
    assert_eq!(hybrid_bytes(&[0; 1000], 1), [0xd0, 0x0f, 0x00]);
    // two runs back to back
    assert_eq!(
        hybrid_bytes(&[1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], 1),
        [0x10, 0x01, 0x12, 0x00]
    );
}

#[test]
fn hybrid_mixed_runs_complete_the_group_before_a_run() {
    // 1, 2, 3 then thirteen 7s: 5 of the 7s complete the group of 8, the other 8 are a run.
    // Bits from the least significant: 001 010 011 111 111 111 111 111
    //   = 0b11_010_001, 0b1111111_0, 0xff
    let mut v = vec![1, 2, 3];
    v.extend([7; 13]);
    assert_eq!(hybrid_bytes(&v, 3), [0x03, 0xd1, 0xfe, 0xff, 0x10, 0x07]);
    // twelve 7s: 5 complete the group, 7 are too few for a run: two groups, the last padded
    // (21 bits of 1s, then 3 of padding)
    v.pop();
    assert_eq!(
        hybrid_bytes(&v, 3),
        [0x05, 0xd1, 0xfe, 0xff, 0xff, 0xff, 0x1f]
    );
    // a run after a whole group needs no filling; values after a run start a new group
    let mut v: Vec<u32> = (0..8).collect();
    v.extend([3; 9]);
    v.push(1);
    assert_eq!(
        hybrid_bytes(&v, 3),
        [0x03, 0x88, 0xc6, 0xfa, 0x12, 0x03, 0x03, 0x01, 0x00, 0x00]
    );
}

#[test]
fn bit_widths() {
    let w: Vec<u8> = [1, 2, 3, 4, 5, 8, 9, 256, 257, 1 << 20]
        .map(bit_width)
        .to_vec();
    assert_eq!(w, [1, 1, 2, 2, 3, 3, 4, 8, 9, 20]);
}

#[test]
fn dictionary_entries_in_order_of_first_appearance() {
    let d = Values::I64(&[7, 3, 7, 7, 3, 9, 7, 7]).dictionary().unwrap();
    assert_eq!(d.first_rows, [0, 1, 5]);
    assert_eq!(d.indices, [0, 1, 0, 0, 1, 2, 0, 0]);
    assert_eq!(d.bit_width(), 2);
    let mut o = Vec::new();
    Values::I64(&[7, 3, 7, 7, 3, 9, 7, 7]).plain(d.first_rows.iter().copied(), &mut o);
    assert_eq!(o.len(), 24);
    assert_eq!(&o[16..], 9i64.to_le_bytes());
    let s: Strings = ["b", "", "b", "", "b", "é", "", "b"].into_iter().collect();
    let d = Values::Utf8(&s).dictionary().unwrap();
    assert_eq!(d.first_rows, [0, 1, 5]);
    assert_eq!(d.indices, [0, 1, 0, 1, 0, 2, 1, 0]);
}

#[test]
fn dictionary_keys_are_bits() {
    let nan2 = f64::from_bits(f64::NAN.to_bits() | 2);
    let v = [
        0.0,
        -0.0,
        f64::NAN,
        nan2,
        0.0,
        -0.0,
        f64::NAN,
        nan2,
        1.0,
        1.0,
        1.0,
        1.0,
    ];
    let d = Values::F64(&v).dictionary().unwrap();
    assert_eq!(d.first_rows, [0, 1, 2, 3, 8]);
    let mut o = Vec::new();
    Values::F64(&v).plain(d.first_rows.iter().copied(), &mut o);
    let back: Vec<u64> = o
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        back,
        [
            0,
            (-0.0f64).to_bits(),
            f64::NAN.to_bits(),
            nan2.to_bits(),
            1.0f64.to_bits()
        ]
    );
    // f32: -0.0 and 0.0 are two entries
    let d = Values::F32(&[-0.0, 0.0, -0.0, 0.0, -0.0, 0.0])
        .dictionary()
        .unwrap();
    assert_eq!(d.first_rows, [0, 1]);
}

#[test]
fn dictionary_fallback_rule() {
    // booleans and empty columns: PLAIN
    assert_eq!(Values::Bool(&[true; 100]).dictionary(), None);
    assert_eq!(Values::F64(&[]).dictionary(), None);
    assert_eq!(Values::Utf8(&Strings::default()).dictionary(), None);
    // all distinct: the dictionary alone is the PLAIN column
    let v: Vec<f64> = (0..100).map(f64::from).collect();
    assert_eq!(Values::F64(&v).dictionary(), None);
    // one value: 8 bytes of dictionary + 1 byte of index against 16 PLAIN: pays
    assert!(Values::U64(&[5, 5]).dictionary().is_some());
    // the boundary: entries + indices at full width must be under PLAIN. 4 rows of INT32
    // (16 bytes), 3 entries (12 bytes) at 2 bits (1 byte): 13 < 16, dictionary
    assert!(Values::I32(&[1, 2, 3, 1]).dictionary().is_some());
    // 4 distinct: 16 + 1 >= 16, PLAIN
    assert_eq!(Values::I32(&[1, 2, 3, 4]).dictionary(), None);
    // half distinct doubles: 8 * n/2 + n * bits/8 < 8 n
    let v: Vec<f64> = (0..1000).map(|i| f64::from(i / 2)).collect();
    assert!(Values::F64(&v).dictionary().is_some());
    // a dictionary over DICT_PAGE_BYTES is not written however much it would save: 1,200
    // strings of 1,000 bytes, each 50 times (1.2 MB of dictionary for 60 MB of PLAIN values)
    let words: Vec<String> = (0..1200).map(|i| format!("{i:01000}")).collect();
    let s: Strings = (0..60_000).map(|i| words[i % 1200].as_str()).collect();
    assert_eq!(Values::Utf8(&s).dictionary(), None);
    let s: Strings = (0..60_000).map(|i| words[i % 1000].as_str()).collect();
    assert_eq!(
        Values::Utf8(&s).dictionary().unwrap().first_rows.len(),
        1000
    );
}

#[test]
fn dictionary_file_layout() {
    let cols = [Column {
        name: "x",
        values: Values::U64(&[7, 7, 7, 7]),
    }];
    let mut buf = Vec::new();
    write_to(&mut buf, &cols, &[]).unwrap();
    let dict = dictionary_page_header(1, 8);
    let at = 4 + dict.len();
    assert_eq!(&buf[4..at], dict.as_slice());
    assert_eq!(&buf[at..at + 8], 7u64.to_le_bytes());
    // definition levels, bit width 1, one bit-packed group of four 0s (a run of 4 is short)
    let page = page_header(4, 6 + 1 + 2, code::RLE_DICTIONARY);
    let at = at + 8;
    assert_eq!(&buf[at..at + page.len()], page.as_slice());
    let at = at + page.len();
    assert_eq!(&buf[at..at + 9], [2, 0, 0, 0, 0x08, 0x01, 1, 0x03, 0x00]);
    // the footer lists the encodings and points at both pages
    let footer_len =
        u32::from_le_bytes(buf[buf.len() - 8..buf.len() - 4].try_into().unwrap()) as usize;
    assert_eq!(at + 9 + footer_len + 8, buf.len());
    let footer = &buf[at + 9..at + 9 + footer_len];
    // after 1 (type): 2, list of 3 i32: [PLAIN, RLE, RLE_DICTIONARY]
    let encodings = [0x19, 0x35, 0x00, 0x06, 0x10];
    assert!(footer.windows(5).any(|w| w == encodings));
    let data_page_offset = (4 + dict.len() + 8) as i64;
    let mut offsets = vec![0x26]; // after 7 (total_compressed_size): 9, i64 data_page_offset
    varint(zigzag(data_page_offset), &mut offsets);
    offsets.extend([0x26, 0x08]); // then 11, i64 dictionary_page_offset 4
    assert!(footer.windows(offsets.len()).any(|w| w == offsets));
}

#[test]
fn the_same_table_writes_the_same_bytes() {
    let s: Strings = (0..5000).map(|i| format!("flow{}", i % 37)).collect();
    let v: Vec<f64> = (0..5000).map(|i| f64::from(i % 11) / 3.0).collect();
    let cols = [
        Column {
            name: "s",
            values: Values::Utf8(&s),
        },
        Column {
            name: "v",
            values: Values::F64(&v),
        },
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write_to(&mut a, &cols, &[]).unwrap();
    write_to(&mut b, &cols, &[]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn row_groups_are_laid_out_as_tables_and_keep_one_schema() {
    use super::GroupWriter;
    static A: [u64; 3] = [1, 2, 3];
    static B: [u64; 2] = [4, 5];
    let col = |v: &'static [u64]| Column {
        name: "x",
        values: Values::U64(v),
    };
    let mut one = Vec::new();
    write_to(&mut one, &[col(&A)], &[]).unwrap();
    let mut two = Vec::new();
    let mut g = GroupWriter::start(&mut two).unwrap();
    g.group(&[col(&A)]).unwrap();
    g.group(&[col(&B)]).unwrap();
    let other = Column {
        name: "y",
        values: Values::U64(&B),
    };
    assert!(matches!(
        g.group(&[other]),
        Err(ParquetError::Schema { group: 2 })
    ));
    g.finish(&[]).unwrap();
    // the first group's column chunk is the one-group file's, byte for byte, then the second
    let footer = |f: &[u8]| u32::from_le_bytes(f[f.len() - 8..f.len() - 4].try_into().unwrap());
    let body = one.len() - footer(&one) as usize - 8;
    assert_eq!(one[..body], two[..body]);
    assert!(two.len() - footer(&two) as usize - 8 > body);
}
