//! Where a runtime-async variant receives its continuation at Enter (docs/abi.md "The async
//! continuation argument"): from the method's signature ([`continuation_register`]) and, for
//! generic code, from the FunctionID's instantiation ([`register`]: shared code takes a
//! generic context first; a value type or a struct result may make it uncertain). And which
//! state machine a box getter's instantiation boxes ([`boxed_machine`]).

use std::sync::atomic::Ordering;

use eltrace_abi::*;

use super::info::Info;
use super::modules::{CORELIB, Modules, type_name};

/// The integer argument register that holds the continuation of `function`'s variant (whose
/// signature is `sig`; `generic_type`: its type is generic), or `None` where that is not
/// certain.
pub fn register(
    modules: &Modules,
    info: &Info,
    function: FunctionID,
    sig: &[u8],
    generic_type: bool,
) -> Option<u8> {
    let cont = continuation_register(sig)?;
    if generic_type {
        // A method of a generic type that is not generic itself: an instance method of a
        // reference type finds its type's instantiation through `this`; a static one takes
        // it first in shared code. Methods of generic value types (instantiating stubs) and
        // generic methods of generic types are left out.
        let Cont::Fixed(r) = cont else {
            return None;
        };
        let (class, _) = info.instantiation(function)?;
        if class == 0 {
            return None;
        }
        let c = info.class_info(class).ok()?;
        if is_value_type(modules, info, c.parent)? {
            return None;
        }
        if sig.first()? & 0x20 != 0 {
            return Some(r);
        }
        let shared = classify(modules, info, &c.args)?.shared;
        return Some(r + u8::from(shared));
    }
    match cont {
        Cont::Fixed(r) => Some(r),
        // A generic method's shared code takes its instantiation (a method descriptor)
        // before the continuation; code for one instantiation does not.
        Cont::Generic(r) => instantiation(modules, info, function).map(|i| r + u8::from(i.shared)),
        Cont::SharedOnly(r) => match instantiation(modules, info, function) {
            Some(Inst { shared: true, .. }) => Some(r + 1),
            Some(Inst {
                primitive: true, ..
            }) => Some(r),
            _ => None,
        },
    }
}

/// Whether a class whose parent is `parent` is a value type: the parent is CoreLib's
/// `System.ValueType` or `System.Enum`.
fn is_value_type(modules: &Modules, info: &Info, parent: ClassID) -> Option<bool> {
    if parent == 0 {
        return Some(false);
    }
    let (name, corelib) = class_name(modules, info, parent)?;
    Some(corelib && (name == "System.ValueType" || name == "System.Enum"))
}

/// The full name of `class` and whether CoreLib defines it.
fn class_name(modules: &Modules, info: &Info, class: ClassID) -> Option<(String, bool)> {
    let c = info.class_info(class).ok()?;
    let entry = modules.get(info, c.module).ok()?;
    let name = type_name(entry.import.as_ref()?, c.token).ok()?;
    Some((name, entry.file.eq_ignore_ascii_case(CORELIB)))
}

/// How a generic method's code is instantiated (see [`classify`]). `None` when the runtime
/// cannot tell or the method has no type arguments.
fn instantiation(modules: &Modules, info: &Info, function: FunctionID) -> Option<Inst> {
    let args = info.method_type_args(function)?;
    if args.is_empty() {
        return None;
    }
    classify(modules, info, &args)
}

/// Type arguments `args`: shared code (one is `System.__Canon`, so every reference type
/// argument is one), or code for one instantiation, and then whether every one is a CoreLib
/// primitive (returned in a register, never through a buffer).
fn classify(modules: &Modules, info: &Info, args: &[ClassID]) -> Option<Inst> {
    let mut inst = Inst {
        shared: false,
        primitive: true,
    };
    for &class in args {
        let canon = modules.canon.load(Ordering::Relaxed);
        if canon != 0 && class == canon {
            inst.shared = true;
            continue;
        }
        let (name, corelib) = class_name(modules, info, class)?;
        if corelib && name == "System.__Canon" {
            modules.canon.store(class, Ordering::Relaxed);
            inst.shared = true;
        } else if !(corelib && PRIMITIVES.contains(&name.as_str())) {
            inst.primitive = false;
        }
    }
    Some(inst)
}

/// The CoreLib types that a method returns in a register (RAX or XMM0), never through a
/// return buffer.
const PRIMITIVES: [&str; 14] = [
    "System.Boolean",
    "System.Char",
    "System.SByte",
    "System.Byte",
    "System.Int16",
    "System.UInt16",
    "System.Int32",
    "System.UInt32",
    "System.Int64",
    "System.UInt64",
    "System.IntPtr",
    "System.UIntPtr",
    "System.Single",
    "System.Double",
];

/// A generic method's instantiation, as far as the continuation's register depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inst {
    /// Shared code: the instantiation argument comes before the continuation.
    shared: bool,
    /// Every type argument is a CoreLib primitive.
    primitive: bool,
}

/// Where a runtime-async variant's continuation is, from its signature alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cont {
    /// In this integer argument register.
    Fixed(u8),
    /// A generic method: in this register, or the next one when the code is shared (the
    /// instantiation argument comes first).
    Generic(u8),
    /// A generic method whose variant returns one of its type parameters: in the register
    /// after this one when the code is shared (the parameter is then a reference, returned
    /// in RAX), in this one for an instantiation over primitives; not certain otherwise (a
    /// struct may come back through a return buffer).
    SharedOnly(u8),
}

/// The integer argument register (0 RDI, 1 RSI, .. 5 R9: SysV x64) that holds a runtime-async
/// variant's hidden continuation argument at its Enter, from the method's signature, or `None`
/// where that is not certain. The runtime passes, in order, `this`, the return buffer, the
/// generic context and then the continuation, before the declared arguments (dotnet/runtime
/// `ArgIterator::GetAsyncContinuationArgOffset`; docs/abi.md "The async continuation
/// argument"). For a generic method the generic context comes only with shared code
/// ([`Cont::Generic`]: the caller asks the runtime). `None` for a variant that may return a
/// struct through a buffer: a Task or ValueTask of a value type or of a type parameter (of a
/// generic method: only its shared code is certain, where the parameter is a reference). The
/// caller rules out methods of generic types.
pub fn continuation_register(sig: &[u8]) -> Option<Cont> {
    let conv = *sig.first()?;
    if conv & 0x40 != 0 {
        return None;
    }
    let generic = conv & 0x10 != 0;
    let mut i = 1;
    if generic {
        compressed(sig, &mut i)?;
    }
    compressed(sig, &mut i)?;
    let mut b = *sig.get(i)?;
    while b == 0x1f || b == 0x20 {
        i += 1;
        compressed(sig, &mut i)?;
        b = *sig.get(i)?;
    }
    i += 1;
    let no_buffer = match b {
        // void, primitives, string, object, native ints: no Task at all (a variant with no
        // thunk), or Task / ValueTask (a class or value type token): the variant returns void.
        0x01..=0x0e | 0x18 | 0x19 | 0x1c | 0x12 | 0x11 => true,
        // A method type parameter (CoreLib's `T TransparentAwait<T>(Task<T>)`, a variant with
        // no thunk): a reference in shared code only.
        0x1e if generic => return Some(Cont::SharedOnly(u8::from(conv & 0x20 != 0))),
        0x15 => {
            // Task<T> / ValueTask<T>: the variant returns T.
            i += 1;
            compressed(sig, &mut i)?;
            if compressed(sig, &mut i)? != 1 {
                return None;
            }
            match *sig.get(i)? {
                0x02..=0x0e | 0x18 | 0x19 | 0x1c | 0x12 | 0x1d | 0x14 => true,
                0x15 => *sig.get(i + 1)? == 0x12,
                // A method type parameter: a reference in shared code only.
                0x1e if generic => return Some(Cont::SharedOnly(u8::from(conv & 0x20 != 0))),
                _ => false,
            }
        }
        _ => false,
    };
    let reg = u8::from(conv & 0x20 != 0);
    no_buffer.then_some(if generic {
        Cont::Generic(reg)
    } else {
        Cont::Fixed(reg)
    })
}

/// Reads one compressed unsigned integer of a signature blob at `*i` (ECMA-335 II.23.2).
fn compressed(sig: &[u8], i: &mut usize) -> Option<u32> {
    let b = *sig.get(*i)? as u32;
    let (v, n) = if b & 0x80 == 0 {
        (b, 1)
    } else if b & 0xc0 == 0x80 {
        (((b & 0x3f) << 8) | *sig.get(*i + 1)? as u32, 2)
    } else {
        let rest = sig.get(*i + 1..*i + 4)?;
        (
            ((b & 0x1f) << 24) | (rest[0] as u32) << 16 | (rest[1] as u32) << 8 | rest[2] as u32,
            4,
        )
    };
    *i += n;
    Some(v)
}

/// The state machine a `GetStateMachineBox<TStateMachine>` instantiation boxes: `(module's glob
/// name, type name, framework module)` of its struct type argument; `None` for shared code
/// (a class state machine, whose `MoveNext` gets the class object itself as `this` at every
/// segment: no box needed) or where the runtime does not say.
pub fn boxed_machine(
    modules: &Modules,
    info: &Info,
    function: FunctionID,
) -> Option<(String, String, bool)> {
    let args = info.method_type_args(function)?;
    let &machine = args.first()?;
    let canon = modules.canon.load(Ordering::Relaxed);
    if canon != 0 && machine == canon {
        return None;
    }
    let c = info.class_info(machine).ok()?;
    let entry = modules.get(info, c.module).ok()?;
    let name = type_name(entry.import.as_ref()?, c.token).ok()?;
    if entry.file.eq_ignore_ascii_case(CORELIB) && name == "System.__Canon" {
        modules.canon.store(machine, Ordering::Relaxed);
        return None;
    }
    Some((entry.glob_name.clone(), name, entry.framework))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_registers_from_signatures() {
        use Cont::*;
        // static Task<long> M(int): RDI.
        assert_eq!(
            continuation_register(&[0x00, 0x01, 0x15, 0x12, 0x09, 0x01, 0x0a, 0x08]),
            Some(Fixed(0))
        );
        // instance ValueTask<int> ReadAsync(Memory<byte>, CancellationToken): RSI.
        let read = [
            0x20, 0x02, 0x15, 0x11, 0x21, 0x01, 0x08, 0x15, 0x11, 0x25, 0x01, 0x05, 0x11, 0x29,
        ];
        assert_eq!(continuation_register(&read), Some(Fixed(1)));
        // instance Task M(): RSI; static void TransparentAwait(object): RDI.
        assert_eq!(
            continuation_register(&[0x20, 0x00, 0x12, 0x0d]),
            Some(Fixed(1))
        );
        assert_eq!(
            continuation_register(&[0x00, 0x01, 0x01, 0x1c]),
            Some(Fixed(0))
        );
        // static T TransparentAwait<T>(Task<T>) (.NET 11 CoreLib): RSI in shared code only.
        let transparent = [
            0x10, 0x01, 0x01, 0x1e, 0x00, 0x15, 0x12, 0x8f, 0xf0, 0x01, 0x1e, 0x00,
        ];
        assert_eq!(continuation_register(&transparent), Some(SharedOnly(0)));
        // Generic methods: static void TransparentAwait<T>(T): RDI, or RSI in shared code;
        // static Task<T[]> WhenAll<T>(IEnumerable<Task<T>>) likewise.
        assert_eq!(
            continuation_register(&[0x10, 0x01, 0x01, 0x01, 0x1e, 0x00]),
            Some(Generic(0))
        );
        let when_all = [
            0x10, 0x01, 0x01, 0x15, 0x12, 0x09, 0x01, 0x1d, 0x1e, 0x00, 0x15, 0x12, 0x0d, 0x01,
            0x15, 0x12, 0x09, 0x01, 0x1e, 0x00,
        ];
        assert_eq!(continuation_register(&when_all), Some(Generic(0)));
        // instance Task<T> M<T>(): certain only in shared code, one past `this`.
        assert_eq!(
            continuation_register(&[0x30, 0x01, 0x00, 0x15, 0x12, 0x09, 0x01, 0x1e, 0x00]),
            Some(SharedOnly(1))
        );
        // ValueTask<SomeStruct> (a return buffer may come first), Task<T> of a type
        // parameter of the type, explicit this: not certain.
        assert_eq!(
            continuation_register(&[0x00, 0x00, 0x15, 0x11, 0x21, 0x01, 0x11, 0x31]),
            None
        );
        assert_eq!(
            continuation_register(&[0x20, 0x00, 0x15, 0x12, 0x09, 0x01, 0x13, 0x00]),
            None
        );
        assert_eq!(continuation_register(&[0x60, 0x00, 0x12, 0x0d]), None);
        assert_eq!(continuation_register(&[]), None);
    }
}
