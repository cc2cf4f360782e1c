//! The value plan and the rendering of `record --values`: how each argument and return value
//! is read ([`Slot`], from the declared [`SigType`]; [`RetPlan`], also from the runtime-async
//! role) and how captured bytes become text. Pure: objects are described through the
//! [`Objects`] trait, which values/mod.rs implements with the profiling API and the tests fake.

use std::fmt::Write as _;

use super::sig::SigType;

/// Most characters of a string value shown.
pub const MAX_STRING_CHARS: usize = 64;

/// How one captured argument or return value is read and shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
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
    /// A `string` reference: null or the (bounded, escaped, quoted) text.
    String,
    /// Any other object reference: null or the object's runtime type name.
    Object,
    /// Not decoded: this text is shown instead (`<struct Ns.T>`, `<byref>`, `?`).
    Opaque(String),
}

impl Slot {
    /// Bytes the value takes in its range (`None` for opaque slots).
    pub fn size(&self) -> Option<usize> {
        Some(match self {
            Slot::Bool | Slot::I1 | Slot::U1 => 1,
            Slot::Char | Slot::I2 | Slot::U2 => 2,
            Slot::I4 | Slot::U4 | Slot::R4 => 4,
            Slot::I8 | Slot::U8 | Slot::R8 | Slot::I | Slot::U => 8,
            Slot::String | Slot::Object => 8,
            Slot::Opaque(_) => return None,
        })
    }

    /// The slot of a declared type; `name` resolves type tokens to names (for placeholders).
    pub fn of(t: &SigType, name: &dyn Fn(u32) -> String) -> Slot {
        match t {
            SigType::Void => Slot::Opaque("void".into()),
            SigType::Bool => Slot::Bool,
            SigType::Char => Slot::Char,
            SigType::I1 => Slot::I1,
            SigType::U1 => Slot::U1,
            SigType::I2 => Slot::I2,
            SigType::U2 => Slot::U2,
            SigType::I4 => Slot::I4,
            SigType::U4 => Slot::U4,
            SigType::I8 => Slot::I8,
            SigType::U8 => Slot::U8,
            SigType::R4 => Slot::R4,
            SigType::R8 => Slot::R8,
            SigType::I => Slot::I,
            SigType::U => Slot::U,
            SigType::String => Slot::String,
            SigType::Object
            | SigType::Class(_)
            | SigType::SzArray(_)
            | SigType::Array(..)
            | SigType::GenericInst {
                value_type: false, ..
            } => Slot::Object,
            SigType::ValueType(tok) => Slot::Opaque(format!("<struct {}>", name(*tok))),
            SigType::GenericInst {
                value_type: true,
                token,
                ..
            } => Slot::Opaque(format!("<struct {}>", name(*token))),
            SigType::ByRef(_) => Slot::Opaque("<byref>".into()),
            SigType::Ptr(_) => Slot::Opaque("<pointer>".into()),
            SigType::FnPtr => Slot::Opaque("<fnptr>".into()),
            SigType::TypedByRef => Slot::Opaque("<typedref>".into()),
            SigType::Var(_) | SigType::MVar(_) => Slot::Opaque("?".into()),
        }
    }
}

/// What a function's Leave captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetPlan {
    /// Nothing (void, an async method's non-generic Task, or an unknown async role).
    None,
    Value(Slot),
}

/// The runtime-async role of a function (from its FUNCTION record's flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncRole {
    /// Not a runtime-async method.
    NotAsync,
    Thunk,
    Variant,
    /// Runtime-async, role unknown (GetFunctionFromToken failed).
    Unknown,
}

/// The names of the awaitable types whose runtime-async variant returns the raw result.
const TASK_TYPES: [&str; 4] = [
    "System.Threading.Tasks.Task",
    "System.Threading.Tasks.ValueTask",
    "System.Threading.Tasks.Task`1",
    "System.Threading.Tasks.ValueTask`1",
];

/// The Leave plan for a declared return type and async role. A runtime-async variant's
/// completion Leave carries the raw `T` of a declared `Task<T>`/`ValueTask<T>` (measured on
/// .NET 10) and nothing for `Task`/`ValueTask`; the thunk returns the Task object.
pub fn ret_plan(ret: &SigType, role: AsyncRole, name: &dyn Fn(u32) -> String) -> RetPlan {
    match role {
        AsyncRole::Unknown => RetPlan::None,
        AsyncRole::Thunk => match ret {
            SigType::Void => RetPlan::None,
            other => RetPlan::Value(Slot::of(other, name)),
        },
        AsyncRole::Variant => match ret {
            SigType::GenericInst { token, args, .. }
                if args.len() == 1 && TASK_TYPES.contains(&name(*token).as_str()) =>
            {
                RetPlan::Value(Slot::of(&args[0], name))
            }
            _ => RetPlan::None,
        },
        AsyncRole::NotAsync => match ret {
            SigType::Void => RetPlan::None,
            other => RetPlan::Value(Slot::of(other, name)),
        },
    }
}

/// What values.rs knows how to find out about a live object.
pub trait Objects {
    /// The object's runtime type name (`Ns.T`), or a placeholder.
    fn type_name(&self, obj: u64) -> String;
    /// The first [`MAX_STRING_CHARS`] UTF-16 units of a string object and its full length.
    fn string(&self, obj: u64) -> Option<(Vec<u16>, usize)>;
}

/// A number as the trace shows it: shortest round-trip decimal (`2`, `0.1`, `-1.5`), with an
/// exponent (`1e300`, `1.5e-7`) outside `[1e-5, 1e16)`, and `NaN`, `inf`, `-inf`.
pub fn render_float(v: f64, short: Option<f32>) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = v.abs();
    let plain = a == 0.0 || (1e-5..1e16).contains(&a);
    match (short, plain) {
        (Some(f), true) => format!("{f}"),
        (Some(f), false) => format!("{f:e}"),
        (None, true) => format!("{v}"),
        (None, false) => format!("{v:e}"),
    }
}

/// Escapes and quotes UTF-16 text; `total` > shown length adds `…` and the length.
pub fn render_string(units: &[u16], total: usize) -> String {
    let mut s = String::with_capacity(units.len() + 2);
    s.push('"');
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok('"') => s.push_str("\\\""),
            Ok('\\') => s.push_str("\\\\"),
            Ok('\n') => s.push_str("\\n"),
            Ok('\r') => s.push_str("\\r"),
            Ok('\t') => s.push_str("\\t"),
            Ok(c) if c.is_control() => {
                let _ = write!(s, "\\u{{{:x}}}", c as u32);
            }
            Ok(c) => s.push(c),
            Err(e) => {
                let _ = write!(s, "\\u{{{:x}}}", e.unpaired_surrogate());
            }
        }
    }
    s.push('"');
    if total > units.len() {
        let _ = write!(s, "…({total} chars)");
    }
    s
}

fn char_text(u: u16) -> String {
    match char::from_u32(u32::from(u)) {
        Some('\'') => "'\\''".into(),
        Some('\\') => "'\\\\'".into(),
        Some(c) if !c.is_control() => format!("'{c}'"),
        _ => format!("'\\u{{{u:x}}}'"),
    }
}

/// Renders one value from its bytes. `Err` when the bytes are too few for the slot.
pub fn render(slot: &Slot, bytes: &[u8], objects: &dyn Objects) -> Result<String, String> {
    if let Some(n) = slot.size() {
        if bytes.len() < n {
            return Err(format!("<{} of {n} bytes>", bytes.len()));
        }
    }
    let mut b8 = [0u8; 8];
    let n = bytes.len().min(8);
    b8[..n].copy_from_slice(&bytes[..n]);
    let raw = u64::from_le_bytes(b8);
    Ok(match slot {
        Slot::Bool => (raw as u8 != 0).to_string(),
        Slot::Char => char_text(raw as u16),
        Slot::I1 => (raw as u8 as i8).to_string(),
        Slot::U1 => (raw as u8).to_string(),
        Slot::I2 => (raw as u16 as i16).to_string(),
        Slot::U2 => (raw as u16).to_string(),
        Slot::I4 => (raw as u32 as i32).to_string(),
        Slot::U4 => (raw as u32).to_string(),
        Slot::I8 => (raw as i64).to_string(),
        Slot::U8 => raw.to_string(),
        Slot::R4 => {
            let f = f32::from_bits(raw as u32);
            render_float(f64::from(f), Some(f))
        }
        Slot::R8 => render_float(f64::from_bits(raw), None),
        Slot::I | Slot::U => format!("{raw:#x}"),
        Slot::String | Slot::Object if raw == 0 => "null".into(),
        Slot::String => match objects.string(raw) {
            Some((units, total)) => render_string(&units, total),
            None => "<string>".into(),
        },
        Slot::Object => objects.type_name(raw),
        Slot::Opaque(text) => text.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::sig::parse_method_sig;
    use super::*;

    fn names(tok: u32) -> String {
        match tok {
            0x0100_0005 => "System.Threading.Tasks.Task`1".into(),
            0x0100_0006 => "System.Threading.Tasks.Task".into(),
            0x0100_0007 => "System.DateTime".into(),
            0x0200_0002 => "Probes.Thing".into(),
            t => format!("<{t:#x}>"),
        }
    }

    struct Fake;
    impl Objects for Fake {
        fn type_name(&self, obj: u64) -> String {
            format!("T{obj:x}")
        }
        fn string(&self, obj: u64) -> Option<(Vec<u16>, usize)> {
            (obj == 0x10).then(|| ("a\"b".encode_utf16().collect(), 3))
        }
    }

    #[test]
    fn instance_method_returning_task_of_long() {
        // instance Task<long> Work(int): HASTHIS, 1 param, GENERICINST CLASS TypeRef#5 <I8>
        let blob = [0x20, 1, 0x15, 0x12, (5 << 2) | 1, 1, 0x0a, 0x08];
        let sig = parse_method_sig(&blob).unwrap();
        assert!(sig.has_this);
        let task_long = SigType::GenericInst {
            value_type: false,
            token: 0x0100_0005,
            args: vec![SigType::I8],
        };
        assert_eq!(sig.ret, task_long);
        assert_eq!(sig.params, vec![SigType::I4]);
        assert_eq!(
            ret_plan(&sig.ret, AsyncRole::Variant, &names),
            RetPlan::Value(Slot::I8)
        );
        assert_eq!(
            ret_plan(&sig.ret, AsyncRole::Thunk, &names),
            RetPlan::Value(Slot::Object)
        );
        assert_eq!(
            ret_plan(&sig.ret, AsyncRole::Unknown, &names),
            RetPlan::None
        );
        // Non-generic Task: nothing at the variant's Leave.
        let task = SigType::Class(0x0100_0006);
        assert_eq!(ret_plan(&task, AsyncRole::Variant, &names), RetPlan::None);
        assert_eq!(
            ret_plan(&SigType::Void, AsyncRole::NotAsync, &names),
            RetPlan::None
        );
    }

    #[test]
    fn arrays_byrefs_tokens_generics() {
        // static void M(int[], string[,], ref int, Thing (typedef 2), DateTime (valuetype
        // typeref 7), !!0, List<!0>-like generic valuetype, int*)
        let blob = [
            0x10,
            1,
            8,
            0x01, // generic method with 1 type param, 8 params, void
            0x1d,
            0x08, // int[]
            0x14,
            0x0e,
            2,
            0,
            0, // string[,]
            0x10,
            0x08, // ref int
            0x12,
            2 << 2, // class Thing
            0x11,
            (7 << 2) | 1, // valuetype DateTime
            0x1e,
            0, // !!0
            0x15,
            0x11,
            (7 << 2) | 1,
            1,
            0x13,
            0, // valuetype DateTime<!0>
            0x0f,
            0x08, // int*
        ];
        let sig = parse_method_sig(&blob).unwrap();
        assert_eq!(sig.generic_params, 1);
        assert_eq!(sig.ret, SigType::Void);
        assert_eq!(sig.params.len(), 8);
        assert_eq!(sig.params[0], SigType::SzArray(Box::new(SigType::I4)));
        assert_eq!(sig.params[1], SigType::Array(Box::new(SigType::String), 2));
        assert_eq!(sig.params[2], SigType::ByRef(Box::new(SigType::I4)));
        assert_eq!(sig.params[3], SigType::Class(0x0200_0002));
        assert_eq!(sig.params[4], SigType::ValueType(0x0100_0007));
        assert_eq!(sig.params[5], SigType::MVar(0));
        let slots: Vec<Slot> = sig.params.iter().map(|t| Slot::of(t, &names)).collect();
        assert_eq!(slots[0], Slot::Object);
        assert_eq!(slots[1], Slot::Object);
        assert_eq!(slots[2], Slot::Opaque("<byref>".into()));
        assert_eq!(slots[3], Slot::Object);
        assert_eq!(slots[4], Slot::Opaque("<struct System.DateTime>".into()));
        assert_eq!(slots[5], Slot::Opaque("?".into()));
        assert_eq!(slots[6], Slot::Opaque("<struct System.DateTime>".into()));
        assert_eq!(slots[7], Slot::Opaque("<pointer>".into()));
    }

    #[test]
    fn rendering() {
        let r = |s: Slot, b: &[u8]| render(&s, b, &Fake).unwrap();
        assert_eq!(r(Slot::I4, &(-4i32).to_le_bytes()), "-4");
        assert_eq!(r(Slot::U8, &u64::MAX.to_le_bytes()), u64::MAX.to_string());
        assert_eq!(r(Slot::I8, &6i64.to_le_bytes()), "6");
        assert_eq!(r(Slot::R8, &2.0f64.to_le_bytes()), "2");
        assert_eq!(r(Slot::R8, &0.1f64.to_le_bytes()), "0.1");
        assert_eq!(r(Slot::R8, &1e300f64.to_le_bytes()), "1e300");
        assert_eq!(r(Slot::R8, &f64::NAN.to_le_bytes()), "NaN");
        assert_eq!(r(Slot::R4, &2.0f32.to_le_bytes()), "2");
        assert_eq!(r(Slot::R4, &0.1f32.to_le_bytes()), "0.1");
        assert_eq!(r(Slot::Bool, &[1]), "true");
        assert_eq!(r(Slot::Char, &[0x41, 0]), "'A'");
        assert_eq!(r(Slot::I1, &[0xff]), "-1");
        assert_eq!(r(Slot::I, &0x1234u64.to_le_bytes()), "0x1234");
        assert_eq!(r(Slot::String, &0u64.to_le_bytes()), "null");
        assert_eq!(r(Slot::String, &0x10u64.to_le_bytes()), "\"a\\\"b\"");
        assert_eq!(r(Slot::Object, &0x20u64.to_le_bytes()), "T20");
        assert_eq!(r(Slot::Object, &0u64.to_le_bytes()), "null");
        assert_eq!(r(Slot::Opaque("?".into()), &[]), "?");
        assert!(render(&Slot::I8, &[1, 2], &Fake).is_err());
    }

    #[test]
    fn strings_are_escaped_and_bounded() {
        let long: Vec<u16> = "x".repeat(MAX_STRING_CHARS).encode_utf16().collect();
        let s = render_string(&long, 100);
        assert!(s.starts_with("\"xxx"));
        assert!(s.ends_with("\"…(100 chars)"), "{s}");
        let odd: Vec<u16> = vec![0x61, 0x0a, 0x01, 0xD800, 0x5c];
        assert_eq!(render_string(&odd, 5), "\"a\\n\\u{1}\\u{d800}\\\\\"");
    }
}
