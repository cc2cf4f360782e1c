//! Compiler state machines from metadata (docs/trace-format.md "FUNCTION"): the FUNCTION flags
//! of a method of a compiler-generated async state machine or iterator type (from the
//! interfaces the type implements), and of a kickoff method (from its `AsyncStateMachine` /
//! `IteratorStateMachine` attribute, whose argument is the state machine type). Pure decisions
//! here; the lookups are in com/metadata.rs and the per-module cache in com/modules.rs. Runs
//! at mapper time, never on the hot path.
//!
//! ```text
//! Ns.T+<Work>d__3        [CompilerGenerated] : IAsyncStateMachine    ASYNC_STATE_MACHINE
//! Ns.T+<Seq>d__1         [CompilerGenerated] : IEnumerable, IEnumerator …   ITERATOR | ENUMERABLE
//! Ns.T.Work              [AsyncStateMachine(typeof(<Work>d__3))]     ASYNC_KICKOFF, "Ns.T+<Work>d__3"
//! ```

use eltrace_trace::FunctionFlags;

/// The interface every async state machine implements.
pub const ASYNC_STATE_MACHINE: &str = "System.Runtime.CompilerServices.IAsyncStateMachine";
/// The non-generic enumerator interface (every iterator type implements it).
pub const ENUMERATOR: &str = "System.Collections.IEnumerator";
/// The non-generic enumerable interface (an iterator method that returns an enumerable).
pub const ENUMERABLE: &str = "System.Collections.IEnumerable";
/// Implemented by an async iterator's state machine (besides `IAsyncStateMachine`).
pub const ASYNC_DISPOSABLE: &str = "System.IAsyncDisposable";
/// The attribute the compiler puts on the types it generates.
pub const COMPILER_GENERATED: &str = "System.Runtime.CompilerServices.CompilerGeneratedAttribute";

/// The kickoff attributes and the flags each gives its method.
pub const KICKOFF_ATTRIBUTES: [(&str, u32); 3] = [
    (
        "System.Runtime.CompilerServices.AsyncStateMachineAttribute",
        FunctionFlags::ASYNC_KICKOFF,
    ),
    (
        "System.Runtime.CompilerServices.IteratorStateMachineAttribute",
        FunctionFlags::ITERATOR_KICKOFF,
    ),
    (
        "System.Runtime.CompilerServices.AsyncIteratorStateMachineAttribute",
        FunctionFlags::ASYNC_KICKOFF | FunctionFlags::ITERATOR_KICKOFF,
    ),
];

/// The flags every method of a type gets, given the interfaces it implements and whether it
/// is compiler-generated: `ASYNC_STATE_MACHINE` (with `ITERATOR` for an async iterator),
/// or `ITERATOR` (with `ENUMERABLE` when it is also the enumerable); 0 for any other type.
pub fn type_flags<S: AsRef<str>>(interfaces: &[S], compiler_generated: bool) -> u32 {
    if !compiler_generated {
        return 0;
    }
    let has = |name: &str| interfaces.iter().any(|i| i.as_ref() == name);
    if has(ASYNC_STATE_MACHINE) {
        if has(ASYNC_DISPOSABLE) {
            FunctionFlags::ASYNC_STATE_MACHINE | FunctionFlags::ITERATOR
        } else {
            FunctionFlags::ASYNC_STATE_MACHINE
        }
    } else if has(ENUMERATOR) {
        if has(ENUMERABLE) {
            FunctionFlags::ITERATOR | FunctionFlags::ENUMERABLE
        } else {
            FunctionFlags::ITERATOR
        }
    } else {
        0
    }
}

/// The type a state-machine attribute names, from its value blob: the prolog `01 00`, then
/// the `System.Type` argument as a serialized string (a compressed length and UTF-8; `FF` for
/// null), e.g. `Ns.T+<Work>d__3`. An assembly qualification (`, Asm, Version=…`) is cut off.
pub fn attribute_type_name(blob: &[u8]) -> Option<String> {
    let rest = blob.strip_prefix(&[0x01, 0x00])?;
    let (len, rest) = compressed_u32(rest)?;
    let bytes = rest.get(..len as usize)?;
    let name = std::str::from_utf8(bytes).ok()?;
    let name = name.split(',').next().unwrap_or(name).trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// An ECMA-335 compressed unsigned integer (II.23.2) and what follows it; `None` for the
/// null string marker `FF` or a cut-off value.
fn compressed_u32(b: &[u8]) -> Option<(u32, &[u8])> {
    let first = *b.first()?;
    if first & 0x80 == 0 {
        Some((u32::from(first), &b[1..]))
    } else if first & 0xC0 == 0x80 {
        let v = (u32::from(first & 0x3F) << 8) | u32::from(*b.get(1)?);
        Some((v, &b[2..]))
    } else if first & 0xE0 == 0xC0 {
        let v = (u32::from(first & 0x1F) << 24)
            | (u32::from(*b.get(1)?) << 16)
            | (u32::from(*b.get(2)?) << 8)
            | u32::from(*b.get(3)?);
        Some((v, &b[4..]))
    } else {
        None
    }
}

/// The path of a (possibly nested) type name: `Ns.Outer+Inner+<M>d__1` →
/// `["Ns.Outer", "Inner", "<M>d__1"]`, outermost first, as `FindTypeDefByName` takes them.
pub fn nested_path(name: &str) -> Vec<&str> {
    name.split('+').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SM: u32 = FunctionFlags::ASYNC_STATE_MACHINE;
    const IT: u32 = FunctionFlags::ITERATOR;
    const EN: u32 = FunctionFlags::ENUMERABLE;

    #[test]
    fn types_by_their_interfaces() {
        assert_eq!(type_flags(&[ASYNC_STATE_MACHINE], true), SM);
        let iterator = [
            "System.Collections.Generic.IEnumerable`1",
            ENUMERABLE,
            ENUMERATOR,
            "System.IDisposable",
        ];
        assert_eq!(type_flags(&iterator, true), IT | EN);
        // An iterator method returning IEnumerator<T>: its type is no enumerable.
        assert_eq!(type_flags(&[ENUMERATOR, "System.IDisposable"], true), IT);
        assert_eq!(
            type_flags(&[ASYNC_STATE_MACHINE, ASYNC_DISPOSABLE], true),
            SM | IT
        );
        // A hand-written enumerator is no iterator; other compiler-generated types neither.
        assert_eq!(type_flags(&[ENUMERATOR], false), 0);
        assert_eq!(type_flags::<&str>(&[], true), 0);
        assert_eq!(type_flags(&["System.IDisposable"], true), 0);
    }

    #[test]
    fn attribute_blobs_name_the_state_machine() {
        let blob = |name: &str| {
            let mut b = vec![1, 0, name.len() as u8];
            b.extend_from_slice(name.as_bytes());
            b.extend_from_slice(&[0, 0]);
            b
        };
        assert_eq!(
            attribute_type_name(&blob("Ns.T+<Work>d__3")).as_deref(),
            Some("Ns.T+<Work>d__3")
        );
        assert_eq!(
            attribute_type_name(&blob("Ns.T+<Echo>d__15`1, Lib, Version=1.0.0.0")).as_deref(),
            Some("Ns.T+<Echo>d__15`1")
        );
        // A two-byte length (200 characters).
        let long = "N.".to_string() + &"x".repeat(198);
        let mut b = vec![1, 0, 0x80, 200];
        b.extend_from_slice(long.as_bytes());
        assert_eq!(attribute_type_name(&b), Some(long));
        assert_eq!(attribute_type_name(&[1, 0, 0xFF]), None, "null");
        assert_eq!(attribute_type_name(&[1, 0, 9, b'a']), None, "cut off");
        assert_eq!(attribute_type_name(&[2, 0, 1, b'a']), None, "no prolog");
        assert_eq!(attribute_type_name(&[]), None);
    }

    #[test]
    fn nested_names_split_outermost_first() {
        assert_eq!(
            nested_path("Ns.Outer+<>c__DisplayClass1_0+<<M>b__0>d"),
            ["Ns.Outer", "<>c__DisplayClass1_0", "<<M>b__0>d"]
        );
        assert_eq!(nested_path("Top"), ["Top"]);
    }
}
