//! Tests of the writer: encodings against hand-computed bytes and the file's invariants (its
//! reading back is tested against pyarrow, tests/test_parquet.py).

use super::*;

#[test]
fn page_header_bytes() {
    // 3 doubles: definition levels 4 + 2 bytes, values 24
    assert_eq!(
        page_header(3, 30),
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
    Values::Bool(&bools).plain(0, 10, &mut o);
    assert_eq!(o, [0b0000_1101, 0b0000_0011]);
    o.clear();
    Values::I8(&[-1, 2]).plain(0, 2, &mut o);
    assert_eq!(o, [0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0]);
    o.clear();
    Values::U32(&[u32::MAX]).plain(0, 1, &mut o);
    assert_eq!(o, [0xff; 4]);
    o.clear();
    Values::U16(&[0xffff]).plain(0, 1, &mut o);
    assert_eq!(o, [0xff, 0xff, 0, 0]);
    o.clear();
    let s: Strings = ["", "é", "ab"].into_iter().collect();
    Values::Utf8(&s).plain(1, 3, &mut o);
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
    let page_x = page_header(2, 6 + 16);
    let page_s = page_header(2, 6 + 10);
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
