//! Thrift's compact protocol, the parts Parquet's metadata needs (the page headers and the
//! footer of [`super`]), written from the Thrift specification of the compact protocol.

/// Unsigned LEB128 (Thrift's and Parquet's varint).
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Zigzag: 0, -1, 1, -2, … to 0, 1, 2, 3, … (Thrift compact's signed integers).
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Thrift's compact protocol, the parts Parquet's metadata needs: a struct is its fields in
/// increasing id order, each a header (the id's delta from the previous field in the high
/// nibble, the type in the low; or the type then the id when the delta is not 1-15) and the
/// value, then a 0 byte.
#[derive(Default)]
pub struct Thrift {
    out: Vec<u8>,
    /// The previous field id of the struct being written, and of the ones it is nested in.
    last: i16,
    outer: Vec<i16>,
}

impl Thrift {
    const BOOL_TRUE: u8 = 1;
    const BOOL_FALSE: u8 = 2;
    const BYTE: u8 = 3;
    const I16: u8 = 4;
    const I32: u8 = 5;
    const I64: u8 = 6;
    const BINARY: u8 = 8;
    const LIST: u8 = 9;
    const STRUCT: u8 = 12;

    fn field(&mut self, id: i16, ty: u8) {
        let delta = i32::from(id) - i32::from(self.last);
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | ty);
        } else {
            self.out.push(ty);
            varint(zigzag(i64::from(id)), &mut self.out);
        }
        self.last = id;
    }

    pub fn i8(&mut self, id: i16, v: i8) {
        self.field(id, Self::BYTE);
        self.out.push(v as u8);
    }

    pub fn i16(&mut self, id: i16, v: i16) {
        self.field(id, Self::I16);
        varint(zigzag(i64::from(v)), &mut self.out);
    }

    pub fn i32(&mut self, id: i16, v: i32) {
        self.field(id, Self::I32);
        varint(zigzag(i64::from(v)), &mut self.out);
    }

    pub fn i64(&mut self, id: i16, v: i64) {
        self.field(id, Self::I64);
        varint(zigzag(v), &mut self.out);
    }

    /// A boolean field: its value is the header's type (no byte follows).
    pub fn bool(&mut self, id: i16, v: bool) {
        self.field(id, if v { Self::BOOL_TRUE } else { Self::BOOL_FALSE });
    }

    pub fn binary(&mut self, id: i16, v: &[u8]) {
        self.field(id, Self::BINARY);
        self.bytes(v);
    }

    fn bytes(&mut self, v: &[u8]) {
        varint(v.len() as u64, &mut self.out);
        self.out.extend_from_slice(v);
    }

    /// A struct field (or a union's member), its fields written by `f`.
    pub fn strukt(&mut self, id: i16, f: impl FnOnce(&mut Self)) {
        self.field(id, Self::STRUCT);
        self.nested(f);
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.outer.push(self.last);
        self.last = 0;
        f(self);
        self.out.push(0);
        self.last = self.outer.pop().unwrap_or(0);
    }

    fn list_header(&mut self, id: i16, elem: u8, n: usize) {
        self.field(id, Self::LIST);
        if n < 15 {
            self.out.push(((n as u8) << 4) | elem);
        } else {
            self.out.push(0xF0 | elem);
            varint(n as u64, &mut self.out);
        }
    }

    pub fn list_i32(&mut self, id: i16, v: &[i32]) {
        self.list_header(id, Self::I32, v.len());
        for &x in v {
            varint(zigzag(i64::from(x)), &mut self.out);
        }
    }

    pub fn list_binary(&mut self, id: i16, v: &[&[u8]]) {
        self.list_header(id, Self::BINARY, v.len());
        for x in v {
            self.bytes(x);
        }
    }

    /// A list of `n` structs, the `i`th written by `f(self, i)`.
    pub fn list_of_structs(&mut self, id: i16, n: usize, mut f: impl FnMut(&mut Self, usize)) {
        self.list_header(id, Self::STRUCT, n);
        for i in 0..n {
            self.nested(|t| f(t, i));
        }
    }

    /// The bytes of the top-level struct, closed.
    pub fn finish(mut self) -> Vec<u8> {
        self.out.push(0);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn varints_and_zigzag() {
        let enc = |v| {
            let mut o = Vec::new();
            varint(v, &mut o);
            o
        };
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(1), [0x01]);
        assert_eq!(enc(127), [0x7f]);
        assert_eq!(enc(128), [0x80, 0x01]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(
            enc(u64::MAX),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert_eq!(
            [0, -1, 1, -2, 2, i64::MAX, i64::MIN].map(zigzag),
            [0, 1, 2, 3, 4, u64::MAX - 1, u64::MAX]
        );
    }

    #[test]
    fn thrift_field_headers_short_and_long() {
        let mut t = Thrift::default();
        t.i32(1, 3); // delta 1, I32: 0x15, zigzag(3) = 6
        t.i64(17, -1); // delta 16: long form, type 0x06, zigzag(17) = 34, zigzag(-1) = 1
        t.bool(18, true); // delta 1, BOOL_TRUE, no value byte
        t.bool(19, false);
        t.i8(20, -2); // BYTE, the raw byte
        t.binary(21, b"ab");
        assert_eq!(
            t.finish(),
            [0x15, 0x06, 0x06, 0x22, 0x01, 0x11, 0x12, 0x13, 0xfe, 0x18, 0x02, b'a', b'b', 0x00]
        );
    }

    #[test]
    fn thrift_nested_structs_and_lists() {
        let mut t = Thrift::default();
        t.i32(1, 0);
        // inside, ids count again from 0; after it, from the struct's own id
        t.strukt(3, |t| t.i32(2, 1));
        t.i32(4, 2);
        t.list_i32(5, &[0, 3]);
        t.list_binary(6, &[b"x"]);
        t.list_of_structs(7, 2, |t, i| t.i32(1, i as i32));
        assert_eq!(
            t.finish(),
            [
                0x15, 0x00, // 1: 0
                0x2c, 0x25, 0x02, 0x00, // 3: {2: 1}
                0x15, 0x04, // 4: 2
                0x19, 0x25, 0x00, 0x06, // 5: [0, 3]
                0x19, 0x18, 0x01, b'x', // 6: ["x"]
                0x19, 0x2c, 0x15, 0x00, 0x00, 0x15, 0x02, 0x00, // 7: [{1: 0}, {1: 1}]
                0x00
            ]
        );
        // a list of 15 or more: the size follows as a varint
        let mut t = Thrift::default();
        t.list_i32(1, &[1; 20]);
        let b = t.finish();
        assert_eq!(&b[..3], [0x19, 0xf5, 20]);
        assert_eq!(b.len(), 3 + 20 + 1);
    }
}
