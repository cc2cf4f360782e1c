//! The protobuf wire format, as much as the exporters write (perfetto.rs, pprof.rs): varint
//! and length-delimited fields, nested messages built in a scratch buffer for their length.
//! Spec: https://protobuf.dev/programming-guides/encoding/.

const VARINT: u32 = 0;
/// The wire type of length-delimited fields.
pub const LEN: u32 = 2;

pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn key(buf: &mut Vec<u8>, field: u32, wire: u32) {
    varint(buf, u64::from(field << 3 | wire));
}

/// A varint field (uint64, int64 of a non-negative value, bool, enum).
pub fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    key(buf, field, VARINT);
    varint(buf, v);
}

/// A length-delimited field (bytes, string, a message's bytes, a packed repeated field).
pub fn bytes(buf: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(buf, field, LEN);
    varint(buf, data.len() as u64);
    buf.extend_from_slice(data);
}

/// A message field written by `f` into a scratch buffer first (for its length).
pub fn message(buf: &mut Vec<u8>, field: u32, f: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    f(&mut inner);
    bytes(buf, field, &inner);
}

/// A packed repeated varint field.
pub fn packed(buf: &mut Vec<u8>, field: u32, values: impl IntoIterator<Item = u64>) {
    let mut inner = Vec::new();
    for v in values {
        varint(&mut inner, v);
    }
    bytes(buf, field, &inner);
}
