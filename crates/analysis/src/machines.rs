//! Compiler state machines (docs/design.md "Compiler state machines"): which kind a function
//! belongs to ([`MachineKind`]: an async method's, an iterator's), the user method that
//! created it (its *kickoff*), and the names they have in a trace. By the profiler's flags
//! (metadata: the interfaces of the type, the kickoff's attribute; docs/trace-format.md
//! "FUNCTION"); for a record without them (an older trace) by the compiler's names:
//! `<M>d__N`, `` <M>d__N`A `` (a generic method), `<<Outer>b__1_0>d` (a lambda),
//! `<<Outer>g__Local|0_0>d` (a local function).
//!
//! ```text
//! Ns.T.Work                      ASYNC_KICKOFF, state_machine Ns.T+<Work>d__3
//! Ns.T+<Work>d__3.MoveNext       ASYNC_STATE_MACHINE             Async, kickoff Ns.T.Work
//! Ns.T+<Seq>d__1`1.MoveNext      ITERATOR | ENUMERABLE            Iterator, kickoff Ns.T.Seq``1
//! Ns.T+<>c+<<Run>b__1_0>d.MoveNext   (no flags: by name)          Async, kickoff Ns.T+<>c.<Run>b__1_0
//! ```

use std::collections::HashMap;

use eltrace_trace::FunctionRecord;

use crate::model::FunctionTable;

/// Which compiler state machine a function's type is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineKind {
    /// Not a state machine's method.
    None,
    /// An async method's state machine (`IAsyncStateMachine`).
    Async,
    /// An iterator (`IEnumerator`): `MoveNext` runs the body from one `yield` to the next.
    Iterator,
    /// An async iterator (`IAsyncEnumerable`): not modelled, its frames are plain calls.
    AsyncIterator,
}

/// The enclosing type and the kickoff method's name (without generic arity) of a compiler
/// state machine type, from its name: `Ns.T+<Work>d__3` → `("Ns.T", "Work")`,
/// `` Ns.T+<Echo>d__15`1 `` → `("Ns.T", "Echo")`, `Ns.T+<>c+<<Run>b__1_0>d` →
/// `("Ns.T+<>c", "<Run>b__1_0")`, `Ns.T+<<Main>g__Loop|0_0>d` → `("Ns.T", "<Main>g__Loop|0_0")`.
pub fn state_machine_type_parts(type_name: &str) -> Option<(&str, &str)> {
    let (outer, nested) = type_name.rsplit_once('+')?;
    // The name between the first `<` and the `>` that balances it.
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in nested.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    let close = close?;
    let name = &nested[1..close];
    let tail = nested[close + 1..].strip_prefix('d')?;
    // `d`, `d__N`, each possibly with the generic arity of the type: `` d`1 ``, `` d__3`1 ``.
    let tail = match tail.strip_prefix("__") {
        Some(t) => {
            let digits = t.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return None;
            }
            &t[digits..]
        }
        None => tail,
    };
    let arity_ok = tail.is_empty()
        || tail
            .strip_prefix('`')
            .is_some_and(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()));
    if name.is_empty() || !arity_ok {
        return None;
    }
    Some((outer, name))
}

/// The user method a `MoveNext` of a compiler state machine runs, by its names: for type
/// `Ns.T+<Work>d__3` and method `MoveNext`, `("Ns.T", "Work")` (see
/// [`state_machine_type_parts`]; the kickoff's own name may carry a generic arity, ``Echo``1``).
pub fn state_machine_method(r: &FunctionRecord) -> Option<(&str, &str)> {
    if r.method != "MoveNext" {
        return None;
    }
    state_machine_type_parts(&r.type_name)
}

/// A method name without its generic arity: ``Echo``1`` → `Echo`.
pub fn without_arity(method: &str) -> &str {
    match method.rfind("``") {
        Some(i) if method[i + 2..].bytes().all(|b| b.is_ascii_digit()) && i + 2 < method.len() => {
            &method[..i]
        }
        _ => method,
    }
}

/// The state machine kind the profiler's flags give a function, `None` when its record
/// carries none of the state-machine bits (an older trace, or metadata that could not tell).
pub fn machine_kind_from_flags(r: &FunctionRecord) -> Option<MachineKind> {
    let f = r.flags;
    if !f.state_machine_bits() {
        return None;
    }
    Some(match (f.async_state_machine(), f.iterator()) {
        (true, true) => MachineKind::AsyncIterator,
        (true, false) => MachineKind::Async,
        (false, true) => MachineKind::Iterator,
        // A kickoff: not a method of a state machine.
        (false, false) => MachineKind::None,
    })
}

/// Whether a method name is one that only an iterator's type has (the fallback for records
/// without flags).
pub fn iterator_member_name(method: &str) -> bool {
    method.ends_with("GetEnumerator")
        || method.ends_with("get_Current")
        || method.ends_with("IDisposable.Dispose")
        || method.ends_with("IEnumerator.Reset")
}

/// Whether `stub` is the kickoff method of state machine `sm` (`Ns.T.Work` for
/// `Ns.T+<Work>d__3.MoveNext`): by the type its attribute names when the profiler recorded it
/// (metadata), else by the names (the generic arity of the kickoff aside: ``Echo``1`` for
/// `` <Echo>d__15`1 ``). When the state machine's record carries flags (the metadata was read),
/// a method without a kickoff flag is not its kickoff.
pub fn is_kickoff(sm: &FunctionRecord, stub: &FunctionRecord) -> bool {
    if stub.module != sm.module {
        return false;
    }
    if !stub.state_machine.is_empty() {
        return stub.state_machine == sm.type_name;
    }
    let stub_is_kickoff = stub.flags.async_kickoff() || stub.flags.iterator_kickoff();
    if sm.flags.state_machine_bits() && !stub_is_kickoff {
        return false;
    }
    state_machine_type_parts(&sm.type_name)
        .is_some_and(|(ty, m)| stub.type_name == ty && without_arity(&stub.method) == m)
}

/// The kickoff methods of a trace's state machines, to name the user method a state
/// machine's `MoveNext` runs (the report, the exports).
#[derive(Debug, Default)]
pub struct Kickoffs {
    /// (module, state machine type) → the kickoff's full name, from the recorded attribute.
    by_machine: HashMap<(String, String), String>,
    /// (module, type, method without arity) → the kickoff's full name.
    by_name: HashMap<(String, String, String), String>,
}

impl Kickoffs {
    pub fn new(functions: &FunctionTable) -> Self {
        let mut k = Kickoffs::default();
        for r in functions.iter() {
            if !r.state_machine.is_empty() {
                k.by_machine
                    .entry((r.module.clone(), r.state_machine.clone()))
                    .or_insert_with(|| r.full_name());
            }
            let key = (
                r.module.clone(),
                r.type_name.clone(),
                without_arity(&r.method).to_string(),
            );
            k.by_name.entry(key).or_insert_with(|| r.full_name());
        }
        k
    }

    /// The user method (kickoff) whose body state machine method `sm` runs, as the trace
    /// names it (``Ns.T.Echo``1``); from the names alone (`Ns.T.Echo`) when the trace has no
    /// record of it. `None` when `sm` is no state machine's `MoveNext`.
    pub fn method_of(&self, sm: &FunctionRecord) -> Option<String> {
        let (ty, m) = state_machine_method(sm)?;
        if let Some(k) = self
            .by_machine
            .get(&(sm.module.clone(), sm.type_name.clone()))
        {
            return Some(k.clone());
        }
        let by_name = self
            .by_name
            .get(&(sm.module.clone(), ty.to_string(), m.to_string()));
        Some(by_name.cloned().unwrap_or_else(|| format!("{ty}.{m}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eltrace_trace::{FunctionFlags, FunctionIdx};

    fn rec(ty: &str, m: &str, flags: u32) -> FunctionRecord {
        FunctionRecord {
            module: "App.dll".into(),
            type_name: ty.into(),
            method: m.into(),
            flags: FunctionFlags(flags),
            ..FunctionRecord::default()
        }
    }

    #[test]
    fn state_machine_names() {
        let parts = state_machine_type_parts;
        assert_eq!(parts("Ns.T+<Work>d__3"), Some(("Ns.T", "Work")));
        assert_eq!(parts("Ns.T+<Echo>d__15`1"), Some(("Ns.T", "Echo")));
        assert_eq!(
            parts("Ns.T+<>c+<<RunAsync>b__1_0>d"),
            Some(("Ns.T+<>c", "<RunAsync>b__1_0"))
        );
        assert_eq!(
            parts("Ns.T+<>c__DisplayClass11_0+<<Throttled>g__One|0>d"),
            Some(("Ns.T+<>c__DisplayClass11_0", "<Throttled>g__One|0"))
        );
        assert_eq!(
            parts("Ns.T+<<Shapes>g__Twice|14_0>d"),
            Some(("Ns.T", "<Shapes>g__Twice|14_0"))
        );
        assert_eq!(
            parts("Ns.T+<<M>g__F|0_0>d`1"),
            Some(("Ns.T", "<M>g__F|0_0"))
        );
        assert_eq!(
            parts("Ns.T+<get_Sequence>d__26"),
            Some(("Ns.T", "get_Sequence"))
        );
        for not in [
            "Ns.T",
            "Ns.T+Inner",
            "Ns.T+<>c",
            "Ns.T+<>c__DisplayClass1_0",
            "Ns.T+<Work>d__",
            "Ns.T+<Work>e__3",
            "Ns.T+<Work>d__3x",
            "Ns.T+<Work>d`",
            "Ns.T+<>d__1",
            "Ns.T+X<Work>d__3",
        ] {
            assert_eq!(parts(not), None, "{not}");
        }
        assert_eq!(
            state_machine_method(&rec("Ns.T+<Work>d__3", "MoveNext", 0)),
            Some(("Ns.T", "Work"))
        );
        assert_eq!(
            state_machine_method(&rec("Ns.T+<Work>d__3", ".ctor", 0)),
            None
        );
        assert_eq!(without_arity("Echo``1"), "Echo");
        assert_eq!(without_arity("Echo``12"), "Echo");
        assert_eq!(without_arity("Echo"), "Echo");
        assert_eq!(without_arity("Echo``"), "Echo``");
    }

    #[test]
    fn kickoffs_by_attribute_and_by_name() {
        let sm = rec(
            "Ns.T+<Echo>d__15`1",
            "MoveNext",
            FunctionFlags::ASYNC_STATE_MACHINE,
        );
        let mut k = rec("Ns.T", "Echo``1", FunctionFlags::ASYNC_KICKOFF);
        k.state_machine = "Ns.T+<Echo>d__15`1".into();
        assert!(is_kickoff(&sm, &k));
        // Another overload's state machine.
        k.state_machine = "Ns.T+<Echo>d__16`1".into();
        assert!(!is_kickoff(&sm, &k));
        // Metadata read, but this method carries no kickoff attribute.
        assert!(!is_kickoff(&sm, &rec("Ns.T", "Echo``1", 0)));
        // An older trace: by the names, the arity aside.
        let old = rec("Ns.T+<Echo>d__15`1", "MoveNext", 0);
        assert!(is_kickoff(&old, &rec("Ns.T", "Echo``1", 0)));
        assert!(!is_kickoff(&old, &rec("Ns.T", "Echo2", 0)));
        let lambda = rec("Ns.T+<>c+<<Run>b__1_0>d", "MoveNext", 0);
        assert!(is_kickoff(&lambda, &rec("Ns.T+<>c", "<Run>b__1_0", 0)));
        let mut other = rec("Ns.T+<>c", "<Run>b__1_0", 0);
        other.module = "Other.dll".into();
        assert!(!is_kickoff(&lambda, &other));
    }

    #[test]
    fn kickoff_names_for_reports() {
        let mut table = FunctionTable::default();
        let mut k = rec("Ns.T", "Echo``1", FunctionFlags::ASYNC_KICKOFF);
        k.state_machine = "Ns.T+<Echo>d__15`1".into();
        table.insert(k);
        table.insert(FunctionRecord {
            idx: FunctionIdx(1),
            ..rec("Ns.T", "Seq``1", 0)
        });
        let ks = Kickoffs::new(&table);
        let name = |ty: &str| ks.method_of(&rec(ty, "MoveNext", 0));
        assert_eq!(name("Ns.T+<Echo>d__15`1").as_deref(), Some("Ns.T.Echo``1"));
        assert_eq!(name("Ns.T+<Seq>d__3`1").as_deref(), Some("Ns.T.Seq``1"));
        assert_eq!(name("Ns.T+<Gone>d__4").as_deref(), Some("Ns.T.Gone"));
        assert_eq!(name("Ns.T"), None);
    }
}
