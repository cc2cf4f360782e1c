//! LEB128 unsigned varints, zigzag signed varints and length-prefixed strings.

pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, zigzag(v));
}

/// The zigzag code of `v` (small magnitudes, small codes).
#[inline(always)]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The value of zigzag code `z`.
#[inline(always)]
pub(crate) fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A cursor over one chunk's payload; every read fails cleanly at the end.
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Whether every byte was read (fields appended by later versions may follow).
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// One unsigned varint. Inlined: where ten bytes are left from its start (all but a
    /// chunk's last bytes) it is read with no per-byte bounds check, a one-byte varint at
    /// once; a chunk's last bytes take [`Cursor::u64_near_end`].
    #[inline(always)]
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match rest.first_chunk::<10>() {
            Some(&[b, ..]) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            Some(bytes) => {
                let mut v = 0u64;
                for (i, &b) in bytes.iter().enumerate() {
                    v |= u64::from(b & 0x7F) << (7 * i);
                    if b & 0x80 == 0 {
                        if i == 9 && b > 1 {
                            break;
                        }
                        self.pos += i + 1;
                        return Ok(v);
                    }
                }
                Err(Self::overlong())
            }
            None => self.u64_near_end(),
        }
    }

    /// A varint that does not end within 64 bits (both read paths give this error).
    #[cold]
    fn overlong() -> DecodeError {
        DecodeError("varint overflows 64 bits")
    }

    /// [`Cursor::u64`] with fewer than ten bytes left: a bounds check per byte (the loop
    /// reads any varint, also one with more bytes left).
    #[inline(never)]
    fn u64_near_end(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or(DecodeError("varint runs past the chunk"))?;
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(Self::overlong());
            }
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
            if shift > 63 {
                return Err(DecodeError("varint longer than 10 bytes"));
            }
        }
    }

    #[inline(always)]
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        u32::try_from(self.u64()?).map_err(|_| DecodeError("value does not fit 32 bits"))
    }

    #[inline(always)]
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(unzigzag(self.u64()?))
    }

    pub fn string(&mut self) -> Result<String, DecodeError> {
        let len = usize::try_from(self.u64()?).map_err(|_| DecodeError("string too long"))?;
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.buf.len())
            .ok_or(DecodeError("string runs past the chunk"))?;
        let s = std::str::from_utf8(&self.buf[self.pos..end])
            .map_err(|_| DecodeError("string is not UTF-8"))?;
        self.pos = end;
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_edges() {
        let vals = [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        let ivals = [0i64, -1, 1, i64::MIN, i64::MAX, -300];
        let mut b = Vec::new();
        for v in vals {
            put_u64(&mut b, v);
        }
        for v in ivals {
            put_i64(&mut b, v);
        }
        put_str(&mut b, "héllo");
        let mut c = Cursor::new(&b);
        for v in vals {
            assert_eq!(c.u64().unwrap(), v);
        }
        for v in ivals {
            assert_eq!(c.i64().unwrap(), v);
        }
        assert_eq!(c.string().unwrap(), "héllo");
        assert!(c.is_empty());
        assert!(c.u64().is_err());
    }

    /// Every value's encoding read with ten or more bytes after it (the inlined path) and as
    /// a chunk's last bytes (the byte-by-byte path) gives the value and the same position.
    #[test]
    fn both_read_paths_agree() {
        let mut vals = vec![0u64, 1, 0x7F, 0x80, 0x3FFF, 0x4000, u64::MAX, u64::MAX >> 1];
        for bits in 0..64 {
            vals.extend([1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) + 1]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (x % 64));
        }
        for v in vals {
            let mut b = Vec::new();
            put_u64(&mut b, v);
            let len = b.len();
            let mut end = Cursor::new(&b);
            assert_eq!(end.u64(), Ok(v));
            assert_eq!(end.pos, len);
            b.extend([0xFF; 12]);
            let mut far = Cursor::new(&b);
            assert_eq!(far.u64(), Ok(v));
            assert_eq!(far.pos, len);
        }
    }

    /// Bad varints fail the same way on both paths, however many bytes follow them.
    #[test]
    fn both_read_paths_refuse_the_same() {
        let bad: [&[u8]; 3] = [
            &[0xFF; 10],
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F],
        ];
        for b in bad {
            let mut c = Cursor::new(b);
            let near = c.u64_near_end();
            assert!(near.is_err());
            let mut padded = b.to_vec();
            padded.extend([0u8; 4]);
            assert_eq!(Cursor::new(&padded).u64(), near);
        }
        // Cut short: only the byte-by-byte path sees the end.
        assert!(Cursor::new(&[0x80, 0x80]).u64().is_err());
    }

    #[test]
    fn overlong_varint_is_an_error() {
        let b = [0xFFu8; 11];
        assert!(Cursor::new(&b).u64().is_err());
        let b = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02];
        assert!(Cursor::new(&b).u64().is_err());
    }
}
