//! The metadata signature parser of `record --values` (ECMA-335 II.23.2): method-def and
//! type-spec blobs into [`MethodSig`] / [`SigType`]. Pure: tokens stay raw; names are resolved
//! later, with metadata.

/// A type as a signature spells it. Tokens are kept raw (TypeDef 0x02…, TypeRef 0x01…,
/// TypeSpec 0x1b…); names are resolved later, with metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigType {
    Void,
    Bool,
    Char,
    I1,
    U1,
    I2,
    U2,
    I4,
    U4,
    I8,
    U8,
    R4,
    R8,
    I,
    U,
    String,
    Object,
    TypedByRef,
    Class(u32),
    ValueType(u32),
    /// `GENERICINST (CLASS | VALUETYPE) token args`.
    GenericInst {
        value_type: bool,
        token: u32,
        args: Vec<SigType>,
    },
    /// A type parameter of the type (`!n`).
    Var(u32),
    /// A type parameter of the method (`!!n`).
    MVar(u32),
    SzArray(Box<SigType>),
    Array(Box<SigType>, u32),
    ByRef(Box<SigType>),
    Ptr(Box<SigType>),
    FnPtr,
}

/// A parsed method signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodSig {
    pub has_this: bool,
    pub explicit_this: bool,
    pub generic_params: u32,
    pub ret: SigType,
    pub params: Vec<SigType>,
}

/// Why a blob could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigError(pub &'static str);

const MAX_DEPTH: usize = 32;
const MAX_PARAMS: u32 = 1024;

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, SigError> {
        let v = *self
            .b
            .get(self.pos)
            .ok_or(SigError("signature ends early"))?;
        self.pos += 1;
        Ok(v)
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// A compressed unsigned integer (1, 2 or 4 bytes, big-endian, II.23.2).
    fn uint(&mut self) -> Result<u32, SigError> {
        let b0 = u32::from(self.byte()?);
        if b0 & 0x80 == 0 {
            Ok(b0)
        } else if b0 & 0xC0 == 0x80 {
            Ok(((b0 & 0x3F) << 8) | u32::from(self.byte()?))
        } else if b0 & 0xE0 == 0xC0 {
            let mut v = b0 & 0x1F;
            for _ in 0..3 {
                v = (v << 8) | u32::from(self.byte()?);
            }
            Ok(v)
        } else {
            Err(SigError("bad compressed integer"))
        }
    }

    /// A TypeDefOrRefOrSpecEncoded token.
    fn type_token(&mut self) -> Result<u32, SigError> {
        let v = self.uint()?;
        let table = match v & 3 {
            0 => 0x0200_0000,
            1 => 0x0100_0000,
            2 => 0x1b00_0000,
            _ => return Err(SigError("bad type token tag")),
        };
        Ok(table | (v >> 2))
    }

    fn ty(&mut self, depth: usize) -> Result<SigType, SigError> {
        if depth > MAX_DEPTH {
            return Err(SigError("signature nests too deeply"));
        }
        let t = self.byte()?;
        Ok(match t {
            0x01 => SigType::Void,
            0x02 => SigType::Bool,
            0x03 => SigType::Char,
            0x04 => SigType::I1,
            0x05 => SigType::U1,
            0x06 => SigType::I2,
            0x07 => SigType::U2,
            0x08 => SigType::I4,
            0x09 => SigType::U4,
            0x0a => SigType::I8,
            0x0b => SigType::U8,
            0x0c => SigType::R4,
            0x0d => SigType::R8,
            0x0e => SigType::String,
            0x0f => SigType::Ptr(Box::new(self.ty(depth + 1)?)),
            0x10 => SigType::ByRef(Box::new(self.ty(depth + 1)?)),
            0x11 => SigType::ValueType(self.type_token()?),
            0x12 => SigType::Class(self.type_token()?),
            0x13 => SigType::Var(self.uint()?),
            0x14 => {
                let elem = self.ty(depth + 1)?;
                let rank = self.uint()?;
                let sizes = self.uint()?;
                for _ in 0..sizes {
                    self.uint()?;
                }
                let bounds = self.uint()?;
                for _ in 0..bounds {
                    self.uint()?; // signed compressed: the bits are all we skip
                }
                SigType::Array(Box::new(elem), rank)
            }
            0x15 => {
                let kind = self.byte()?;
                let value_type = match kind {
                    0x11 => true,
                    0x12 => false,
                    _ => return Err(SigError("GENERICINST of neither class nor valuetype")),
                };
                let token = self.type_token()?;
                let n = self.uint()?;
                if n > MAX_PARAMS {
                    return Err(SigError("too many type arguments"));
                }
                let args = (0..n)
                    .map(|_| self.ty(depth + 1))
                    .collect::<Result<Vec<_>, _>>()?;
                SigType::GenericInst {
                    value_type,
                    token,
                    args,
                }
            }
            0x16 => SigType::TypedByRef,
            0x18 => SigType::I,
            0x19 => SigType::U,
            0x1b => {
                // A whole method signature follows; parse and drop it.
                self.method(depth + 1)?;
                SigType::FnPtr
            }
            0x1c => SigType::Object,
            0x1d => SigType::SzArray(Box::new(self.ty(depth + 1)?)),
            0x1e => SigType::MVar(self.uint()?),
            // CMOD_REQD / CMOD_OPT token: modifiers do not change how a value is read.
            0x1f | 0x20 => {
                self.type_token()?;
                self.ty(depth + 1)?
            }
            0x45 => self.ty(depth + 1)?, // PINNED (locals only, tolerated)
            _ => return Err(SigError("unknown element type")),
        })
    }

    fn method(&mut self, depth: usize) -> Result<MethodSig, SigError> {
        let conv = self.byte()?;
        let generic_params = if conv & 0x10 != 0 { self.uint()? } else { 0 };
        let n = self.uint()?;
        if n > MAX_PARAMS {
            return Err(SigError("too many parameters"));
        }
        let ret = self.ty(depth + 1)?;
        let mut params = Vec::with_capacity(n as usize);
        for _ in 0..n {
            if self.peek() == Some(0x41) {
                // SENTINEL: the vararg part of a call-site signature; nothing of ours.
                break;
            }
            params.push(self.ty(depth + 1)?);
        }
        Ok(MethodSig {
            has_this: conv & 0x20 != 0,
            explicit_this: conv & 0x40 != 0,
            generic_params,
            ret,
            params,
        })
    }
}

/// Parses a method-def signature blob (as `GetMethodProps` returns it).
pub fn parse_method_sig(blob: &[u8]) -> Result<MethodSig, SigError> {
    Cursor { b: blob, pos: 0 }.method(0)
}

/// Parses a type signature blob (as `GetTypeSpecFromToken` returns it).
pub fn parse_type_sig(blob: &[u8]) -> Result<SigType, SigError> {
    Cursor { b: blob, pos: 0 }.ty(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers() {
        let mut c = Cursor {
            b: &[0x03, 0x80, 0x80, 0xBF, 0xFF, 0xC0, 0x00, 0x40, 0x00, 0xE0],
            pos: 0,
        };
        assert_eq!(c.uint(), Ok(3));
        assert_eq!(c.uint(), Ok(0x80));
        assert_eq!(c.uint(), Ok(0x3FFF));
        assert_eq!(c.uint(), Ok(0x4000));
        assert!(c.uint().is_err());
    }

    #[test]
    fn static_method_with_primitives() {
        // static long M(int, double, string, object, bool, char)
        let sig = parse_method_sig(&[0x00, 6, 0x0a, 0x08, 0x0d, 0x0e, 0x1c, 0x02, 0x03]).unwrap();
        assert!(!sig.has_this);
        assert_eq!(sig.ret, SigType::I8);
        assert_eq!(
            sig.params,
            vec![
                SigType::I4,
                SigType::R8,
                SigType::String,
                SigType::Object,
                SigType::Bool,
                SigType::Char
            ]
        );
    }

    #[test]
    fn modifiers_and_bad_blobs() {
        // static int M(modreq(typeref 3) int)
        let sig = parse_method_sig(&[0x00, 1, 0x08, 0x1f, (3 << 2) | 1, 0x08]).unwrap();
        assert_eq!(sig.params, vec![SigType::I4]);
        assert!(parse_method_sig(&[0x00, 2, 0x08, 0x08]).is_err()); // one param missing
        assert!(parse_method_sig(&[0x00, 1, 0x08, 0x99]).is_err()); // unknown element
        assert!(parse_method_sig(&[]).is_err());
        assert_eq!(
            parse_type_sig(&[0x15, 0x12, (5 << 2) | 1, 1, 0x0d]),
            Ok(SigType::GenericInst {
                value_type: false,
                token: 0x0100_0005,
                args: vec![SigType::R8]
            })
        );
    }
}
