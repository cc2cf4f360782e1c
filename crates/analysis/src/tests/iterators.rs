//! Iterators: enumerations (docs/design.md "Iterators: enumerations") on synthetic traces of
//! the events a C# iterator makes (the shapes measured on .NET 10 in tests/apps/Scenarios
//! `iterators`), and state machines told apart by the profiler's flags or by their names.

use eltrace_trace::EventKind::{self, Continuation, Enter, Leave, Unwind, Value};
use eltrace_trace::{FunctionFlags as F, ValueStatus};

use super::build::*;
use crate::*;

/// A trace of functions given by alias and events given as scripts, one per thread:
/// `Name` enters it, `<` leaves the top frame (`<true`/`<false`: with that return value, as
/// `record --values` captures it), `!` unwinds it, `@N` sets the time of the next event,
/// `Name#V` enters it after a Continuation event of value `V` (the `this` the profiler records
/// for async iterators' members and state machines' `MoveNext`), `^Name#V` is a Continuation
/// event `V` and a Leave of `Name` that has no frame (an unselected box getter's).
///
/// Aliases: a plain method `Run` (`Ns.T.Run`); for an iterator `X` declared with
/// [`Trace::iterator`]: `X` its kickoff, `X.new` `.ctor`, `X.get` `GetEnumerator`, `X.next`
/// `MoveNext`, `X.cur` `get_Current`, `X.dispose` `Dispose`, `X.fin` `<>m__Finally1`; for
/// an async method `A` ([`Trace::async_method`]): `A` and `A.next`.
struct Trace {
    /// (alias, type, method, flags, state machine)
    funcs: Vec<(String, String, String, u32, String)>,
    threads: Vec<String>,
}

impl Trace {
    fn new(plain: &[&str]) -> Self {
        let mut t = Trace {
            funcs: Vec::new(),
            threads: Vec::new(),
        };
        for p in plain {
            t.add(p, "Ns.T", p, 0, "");
        }
        t
    }

    fn add(&mut self, alias: &str, ty: &str, method: &str, flags: u32, sm: &str) {
        self.funcs.push((
            alias.into(),
            ty.into(),
            method.into(),
            F::HOOKED | flags,
            sm.into(),
        ));
    }

    /// Iterator `name` (`enumerable`: its method returns an IEnumerable; else the
    /// enumerator), with its members; `flags`: whether the profiler's flags are there.
    fn iterator_with(mut self, name: &str, enumerable: bool, flags: bool) -> Self {
        let sm = format!("Ns.T+<{name}>d__{}", self.funcs.len());
        let en = if enumerable { F::ENUMERABLE } else { 0 };
        let (kick, member, smname) = if flags {
            (F::ITERATOR_KICKOFF | en, F::ITERATOR | en, sm.as_str())
        } else {
            (0, 0, "")
        };
        self.add(name, "Ns.T", name, kick, smname);
        let members = [
            ("new", ".ctor"),
            (
                "get",
                "System.Collections.Generic.IEnumerable<System.Int32>.GetEnumerator",
            ),
            ("next", "MoveNext"),
            (
                "cur",
                "System.Collections.Generic.IEnumerator<System.Int32>.get_Current",
            ),
            ("dispose", "System.IDisposable.Dispose"),
            ("fin", "<>m__Finally1"),
        ];
        for (short, method) in members {
            if short == "get" && !enumerable {
                continue;
            }
            self.add(&format!("{name}.{short}"), &sm, method, member, "");
        }
        self
    }

    fn iterator(self, name: &str) -> Self {
        self.iterator_with(name, true, true)
    }

    fn async_method(mut self, name: &str) -> Self {
        let sm = format!("Ns.T+<{name}>d__{}", self.funcs.len());
        self.add(name, "Ns.T", name, F::ASYNC_KICKOFF, &sm);
        self.add(
            &format!("{name}.next"),
            &sm,
            "MoveNext",
            F::ASYNC_STATE_MACHINE,
            "",
        );
        self
    }

    /// Async iterator `name` (`IAsyncEnumerable`): `X` its kickoff, `X.get`
    /// `GetAsyncEnumerator`, `X.anext` `MoveNextAsync`, `X.body` the body's `MoveNext`,
    /// `X.cur` `get_Current`, `X.dispose` `DisposeAsync`.
    fn async_iterator(mut self, name: &str) -> Self {
        let sm = format!("Ns.T+<{name}>d__{}", self.funcs.len());
        let both = F::ASYNC_STATE_MACHINE | F::ITERATOR;
        self.add(
            name,
            "Ns.T",
            name,
            F::ASYNC_KICKOFF | F::ITERATOR_KICKOFF,
            &sm,
        );
        let members = [
            (
                "get",
                "System.Collections.Generic.IAsyncEnumerable<System.Int32>.GetAsyncEnumerator",
            ),
            (
                "anext",
                "System.Collections.Generic.IAsyncEnumerator<System.Int32>.MoveNextAsync",
            ),
            ("body", "MoveNext"),
            (
                "cur",
                "System.Collections.Generic.IAsyncEnumerator<System.Int32>.get_Current",
            ),
            ("dispose", "System.IAsyncDisposable.DisposeAsync"),
        ];
        for (short, method) in members {
            self.add(&format!("{name}.{short}"), &sm, method, both, "");
        }
        self
    }

    fn thread(mut self, script: &str) -> Self {
        self.threads.push(script.into());
        self
    }

    fn idx(&self, alias: &str) -> u32 {
        self.funcs
            .iter()
            .position(|f| f.0 == alias)
            .unwrap_or_else(|| panic!("no function {alias}")) as u32
    }

    fn bytes(&self) -> Vec<u8> {
        // Recorded objects carry GC epochs (the profiler's values do).
        let mut info = eltrace_trace::TraceInfo::new(7);
        info.extra.push((
            eltrace_trace::protocol::info_key::GC_EPOCHS.into(),
            "1".into(),
        ));
        let mut b = TraceBuilder::new(info);
        for (_, ty, m, flags, sm) in &self.funcs {
            b = b.function(
                Function::new("App.dll", ty, m)
                    .flags(*flags)
                    .state_machine(sm),
            );
        }
        b = b
            .value(0, ValueStatus::Ok, "true")
            .value(1, ValueStatus::Ok, "false");
        let mut end = 0;
        for (t, script) in self.threads.iter().enumerate() {
            let mut ts = 0u64;
            let mut stack: Vec<u32> = Vec::new();
            let mut evs: Vec<(u64, EventKind, u32, u64)> = Vec::new();
            for tok in script.split_whitespace() {
                ts += 10;
                let leave = |stack: &mut Vec<u32>, kind| {
                    let f = stack.pop().expect("a frame to leave");
                    (kind, f)
                };
                match tok {
                    _ if tok.starts_with('@') => ts = tok[1..].parse().unwrap(),
                    "<" | "<true" | "<false" => {
                        let (k, f) = leave(&mut stack, Leave);
                        evs.push((ts, k, f, 0));
                        if tok != "<" {
                            evs.push((ts, Value, u32::from(tok == "<false"), 0));
                        }
                    }
                    "!" => {
                        let (k, f) = leave(&mut stack, Unwind);
                        evs.push((ts, k, f, 0));
                    }
                    _ if tok.starts_with('^') => {
                        let (name, v) = tok[1..].split_once('#').expect("^Name#V");
                        let f = self.idx(name);
                        evs.push((ts, Continuation, f, v.parse().unwrap()));
                        evs.push((ts, Leave, f, 0));
                    }
                    name => {
                        let (name, this) = match name.split_once('#') {
                            Some((n, v)) => (n, Some(v.parse::<u64>().unwrap())),
                            None => (name, None),
                        };
                        let f = self.idx(name);
                        stack.push(f);
                        if let Some(v) = this {
                            evs.push((ts, Continuation, f, v));
                        }
                        evs.push((ts, Enter, f, 0));
                    }
                }
            }
            end = end.max(ts + 10);
            b = b.thread(t as u32, 100 + t as u64).events_sp(t as u32, &evs);
        }
        b.end(end)
    }

    fn run(&self) -> Analysis {
        run(&self.bytes())
    }
}

/// (calls = MoveNext frames, enumerations, yields, abandoned, faulted, pending) of iterator
/// `name`'s MoveNext.
fn its(t: &Trace, a: &Analysis, name: &str) -> (u64, u64, u64, u64, u64, u64) {
    let s = fs(a, t.idx(&format!("{name}.next")));
    assert_eq!(s.calls, s.segments, "{s:?}");
    (
        s.calls,
        s.enumerations,
        s.suspensions,
        s.abandoned,
        s.faulted,
        s.pending_at_end,
    )
}

/// `n` MoveNext calls that each yield and are read (`MoveNext`, then `get_Current`).
fn reads(x: &str, n: usize) -> String {
    format!("{x}.next < {x}.cur < ").repeat(n)
}

/// One enumerable enumerated three times: abandoned by Take after 2 (Take reads Current after
/// each MoveNext), by foreach to its end (3 yields, a 4th MoveNext returns false), by Count
/// (no Current at all). The kickoff is called once per `Seq` call, not once per enumeration.
#[test]
fn enumerations_are_not_merged_and_an_abandoned_one_keeps_its_last_yield() {
    let take = format!(
        "Seq Seq.new < < Seq.get < {} Seq.dispose <",
        reads("Seq", 2)
    );
    let foreach = format!(
        "Seq Seq.new < < Seq.get < {} Seq.next < Seq.dispose <",
        reads("Seq", 3)
    );
    let count = "Seq Seq.new < < Seq.get < Seq.next < Seq.next < Seq.next < Seq.next < \
                 Seq.dispose <";
    let t = Trace::new(&["Run"])
        .iterator("Seq")
        .thread(&format!("Run {take} {foreach} {count} <"));
    let a = t.run();
    assert_eq!(fs(&a, t.idx("Seq")).calls, 3);
    // MoveNext calls 2 + 4 + 4; yields 2 + 3 + 3; the Take one abandoned.
    assert_eq!(its(&t, &a, "Seq"), (10, 3, 8, 1, 0, 0));
    assert_eq!(a.totals.enumerations, 3);
    assert_eq!(a.totals.logical_calls, 0);
    assert_eq!(fs(&a, t.idx("Seq.next")).resumes, 7);
}

/// A recursive iterator: each level's enumerator is obtained and moved inside the MoveNext of
/// the level above (the outer enumeration holds it across its frames), and disposed from the
/// outer one's `<>m__Finally1`. Walk(2) over a tree 1 <- 2 -> 3, abandoned after 2 elements
/// (First): Walk(2) and Walk(1) stop after a yield; Walk(null) below 1 ends at once.
#[test]
fn recursive_iterators_are_one_enumeration_per_level() {
    // Walk(1): left Walk(null) (ends at once), yields 1; the consumer reads it.
    let w_null = "Walk Walk.new < < Walk.get < Walk.next < Walk.fin Walk.dispose < <";
    let script = format!(
        "Run Walk Walk.new < < Walk.get < \
         Walk.next Walk Walk.new < < Walk.get < Walk.next {w_null} < Walk.cur < < Walk.cur < \
         Walk.next Walk.next < Walk.fin Walk.dispose < < < Walk.cur < \
         Walk.dispose Walk.fin < < <"
    );
    let t = Trace::new(&["Run"]).iterator("Walk").thread(&script);
    let a = t.run();
    assert_eq!(fs(&a, t.idx("Walk")).calls, 3);
    // Walk(2): MoveNext ×2, both yield (1 from Walk(1), then its own 2), abandoned.
    // Walk(1): MoveNext ×2: yields 1, then ends (returns false: no Current).
    // Walk(null): MoveNext ×1, completed.
    assert_eq!(its(&t, &a, "Walk"), (5, 3, 3, 1, 0, 0));
}

/// Nested enumerations of one iterator in one frame (foreach in foreach) and two obtained
/// together (`Zip` of an iterator with itself): both start, none is merged.
#[test]
fn nested_and_side_by_side_enumerations_of_one_iterator() {
    let inner = format!(
        "Seq Seq.new < < Seq.get < {} Seq.next < Seq.dispose <",
        reads("Seq", 1)
    );
    let nested = format!(
        "Seq Seq.new < < Seq.get < Seq.next < Seq.cur < {inner} Seq.next < Seq.cur < {inner} \
         Seq.next < Seq.dispose <"
    );
    let t = Trace::new(&["Run"])
        .iterator("Seq")
        .thread(&format!("Run {nested} <"));
    // Outer: 3 MoveNext, 2 yields; inner twice: 2 MoveNext, 1 yield.
    assert_eq!(its(&t, &t.run(), "Seq"), (7, 3, 4, 0, 0, 0));

    let zip = "Run Seq Seq.new < < Seq Seq.new < < Seq.get < Seq.get < \
               Seq.next < Seq.next < Seq.cur < Seq.cur < Seq.next < Seq.next < Seq.cur < \
               Seq.cur < Seq.next < Seq.dispose < Seq.dispose < <";
    let t = Trace::new(&["Run"]).iterator("Seq").thread(zip);
    let (calls, enumerations, ..) = its(&t, &t.run(), "Seq");
    // Which MoveNext belongs to which enumerator is a guess here (docs: known limits), but
    // both enumerations are counted.
    assert_eq!((calls, enumerations), (5, 2));
}

/// An iterator method that returns the enumerator itself (`IEnumerator<T> GetEnumerator()`
/// of a collection): its Leave hands the enumerator to its caller. Enumerated twice, the
/// second time left by `break`.
#[test]
fn an_iterator_returning_its_enumerator_starts_at_its_kickoff() {
    let once = format!(
        "Bag Bag.new < < {} Bag.next < Bag.dispose <",
        reads("Bag", 2)
    );
    let broken = format!("Bag Bag.new < < {} Bag.dispose <", reads("Bag", 1));
    let t = Trace::new(&["Run"])
        .iterator_with("Bag", false, true)
        .thread(&format!("Run {once} {broken} <"));
    let a = t.run();
    assert_eq!(fs(&a, t.idx("Bag")).calls, 2);
    assert_eq!(its(&t, &a, "Bag"), (4, 2, 3, 1, 0, 0));
    // Two of them, moved in turn (`Zip`): two enumerations, not one.
    let t = Trace::new(&["Run"])
        .iterator_with("Bag", false, true)
        .thread(
            "Run Bag Bag.new < < Bag Bag.new < < Bag.next < Bag.next < Bag.cur < Bag.cur < \
                 Bag.next < Bag.dispose < Bag.dispose < <",
        );
    assert_eq!(its(&t, &t.run(), "Bag").1, 2);
}

/// An enumerator obtained in one frame and moved by the methods it calls (two helpers), then
/// disposed: one enumeration. One obtained in a helper that returns it: handed to the caller.
#[test]
fn an_enumerator_moved_by_callees_or_returned_by_one() {
    let t = Trace::new(&["Run", "Drain", "Make"])
        .iterator("Seq")
        .thread(&format!(
            "Run Seq Seq.new < < Seq.get < Drain {} < Drain {} < Seq.dispose < \
         Make Seq Seq.new < < Seq.get < < {} Seq.next < <",
            reads("Seq", 2),
            reads("Seq", 1),
            reads("Seq", 1),
        ));
    let a = t.run();
    // The first: 3 MoveNext, 3 yields, abandoned (disposed after a read element). The second:
    // 2 MoveNext, 1 yield, the last returned false (no Current): completed, never disposed.
    assert_eq!(its(&t, &a, "Seq"), (5, 2, 4, 1, 0, 0));
    // Two returned by helpers (at the same depth, one after the other), moved in turn.
    let make = "Make Seq Seq.new < < Seq.get < <";
    let t = Trace::new(&["Run", "Make"])
        .iterator("Seq")
        .thread(&format!(
            "Run {make} {make} Seq.next < Seq.next < Seq.cur < Seq.cur < Seq.next < Seq.next < <"
        ));
    assert_eq!(its(&t, &t.run(), "Seq"), (4, 2, 2, 0, 0, 0));
}

/// An iterator consumed by an async method across awaits: the enumerator is held by the
/// async call, whose segments run on two threads.
#[test]
fn an_enumerator_held_by_an_async_call_across_threads() {
    let t = Trace::new(&["Run"])
        .iterator("Seq")
        .async_method("Loop")
        .thread("Run Loop Loop.next Seq Seq.new < < Seq.get < Seq.next < Seq.cur < < < @1000 <")
        .thread("@200 Loop.next Seq.next < Seq.cur < < @300 Loop.next Seq.next < Seq.dispose < <");
    let a = t.run();
    assert_eq!(its(&t, &a, "Seq"), (3, 1, 2, 0, 0, 0));
    let l = fs(&a, t.idx("Loop.next"));
    assert_eq!((l.calls, l.segments), (1, 3));
}

/// Two calls of one async method, each enumerating its own enumerator of one iterator, their
/// resumes on a third thread, where only order would say which call a resume continues: the
/// enumerators' objects (`this`, recorded for async iterators' members) keep each move with
/// its own enumeration, whichever call the resume was linked to.
#[test]
fn enumerators_known_by_their_objects_whatever_call_a_resume_was_linked_to() {
    let script = |x: &str| {
        format!(
            "Run Loop Loop.next Seq Seq.new < < Seq.get < Seq.next#{x} < Seq.cur#{x} < < < @2000 <"
        )
    };
    let t = Trace::new(&["Run"])
        .iterator("Seq")
        .async_method("Loop")
        .thread(&script("1024"))
        .thread(&format!("@15 {}", script("2048")))
        .thread(
            "@200 Loop.next Seq.next#2048 < Seq.cur#2048 < < \
             @300 Loop.next Seq.next#1024 < Seq.cur#1024 < < \
             @400 Loop.next Seq.next#2048 <false < \
             @500 Loop.next Seq.next#1024 < Seq.cur#1024 < Seq.dispose#1024 < <",
        );
    let a = t.run();
    // 6 MoveNext, 2 enumerations: 2048's 3 moves (2 yields, completed), 1024's 3 (3 yields,
    // abandoned).
    assert_eq!(its(&t, &a, "Seq"), (6, 2, 5, 1, 0, 0));
}

/// A classic async method's `MoveNext` receives its state machine as `this`: a struct on the
/// kickoff's stack at the first segment, inside its box at every resume. Two calls of `Loop`
/// resumed in turn on a third thread: the first resume of each is chosen by order among the
/// calls that received no other box (without boxes, order alone gives the second resume to the
/// call left open last), every later one by its box.
#[test]
fn state_machine_resumes_known_by_their_box() {
    let (b1, b2) = (0x7f00_0000_1000u64, 0x7f00_0000_2000u64);
    let t = Trace::new(&["Run"])
        .async_method("Loop")
        .thread("Run Loop Loop.next#16 < < @2000 <")
        .thread("@15 Run Loop Loop.next#16 < < @2000 <")
        .thread(&format!(
            "@200 Loop.next#{b2} < @300 Loop.next#{b1} < @400 Loop.next#{b2} < @500 Loop.next#{b1} <"
        ));
    let (a, frames) = analyse_records(&t.bytes(), &Options::default(), true);
    let l = fs(&a, t.idx("Loop.next"));
    assert_eq!((l.calls, l.segments, l.resumes), (2, 6, 4), "{l:?}");
    // The second first resume has one candidate left: not counted as inferred.
    assert_eq!((l.identity_resumes, l.inferred_resumes), (2, 1), "{l:?}");
    let call_at = |start: u64| segment_call(&frames, t.idx("Loop.next"), start);
    // (`@N` sets the time before the next token's 10 ns.)
    assert_eq!(call_at(210), call_at(410));
    assert_eq!(call_at(310), call_at(510));
    assert_ne!(call_at(210), call_at(310));
}

/// The same with the builder's box getter recorded: each suspension gives its call the box
/// its state machine moved into, and each resume's `this` (0x40 into its box) names the call,
/// the first resume too.
#[test]
fn state_machine_resumes_known_by_the_box_of_their_suspension() {
    let (b1, b2) = (0x7f00_0000_1000u64, 0x7f00_0000_2000u64);
    let mut t = Trace::new(&["Run"]).async_method("Loop");
    t.add(
        "Box",
        "System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1",
        "GetStateMachineBox``1",
        F::STATE_MACHINE_BOX,
        "",
    );
    let (r1, r2) = (b1 + 0x40, b2 + 0x40);
    let t = t
        .thread(&format!("Run Loop Loop.next#16 ^Box#{b1} < < @2000 <"))
        .thread(&format!("@15 Run Loop Loop.next#16 ^Box#{b2} < < @2000 <"))
        .thread(&format!(
            "@200 Loop.next#{r2} ^Box#{b2} < @300 Loop.next#{r1} ^Box#{b1} < \
             @400 Loop.next#{r2} < @500 Loop.next#{r1} <"
        ));
    let (a, frames) = analyse_records(&t.bytes(), &Options::default(), true);
    assert_eq!(a.totals.unmatched_leaves, 0);
    let l = fs(&a, t.idx("Loop.next"));
    assert_eq!((l.calls, l.segments, l.resumes), (2, 6, 4), "{l:?}");
    assert_eq!((l.identity_resumes, l.inferred_resumes), (4, 0), "{l:?}");
    let call_at = |start: u64| segment_call(&frames, t.idx("Loop.next"), start);
    assert_eq!(
        call_at(10 + 20),
        call_at(310),
        "B1's call resumes at 310 and 510"
    );
    assert_eq!(call_at(310), call_at(510));
    assert_eq!(call_at(210), call_at(410));
    assert_ne!(call_at(210), call_at(310));
}

/// A MoveNext that throws: its fault handler disposes its own enumerator (a Dispose called
/// by the running MoveNext), then the exception leaves it. The enumeration faulted; the
/// consumer's Dispose later changes nothing.
#[test]
fn a_throwing_move_next_faults_its_enumeration() {
    let t = Trace::new(&["Run"]).iterator("Seq").thread(&format!(
        "Run Seq Seq.new < < Seq.get < {} Seq.next Seq.dispose < ! Seq.dispose < <",
        reads("Seq", 2)
    ));
    assert_eq!(its(&t, &t.run(), "Seq"), (3, 1, 2, 0, 1, 0));
    // No GetEnumerator in the trace (not probed): a MoveNext after the faulted one starts
    // another enumeration, the faulted one being over.
    let t = Trace::new(&["Run"]).iterator("Seq").thread(
        "Run Seq.next < Seq.cur < Seq.next Seq.dispose < ! Seq.next < Seq.cur < Seq.next < <",
    );
    assert_eq!(its(&t, &t.run(), "Seq"), (4, 2, 2, 0, 1, 0));
}

/// With `record --values` the return value of each MoveNext decides, also for a consumer that
/// reads no element (`Any()`: one MoveNext that returned true, abandoned).
#[test]
fn move_next_return_values_decide_when_captured() {
    let any = "Seq Seq.new < < Seq.get < Seq.next <true Seq.dispose <";
    let count = "Seq Seq.new < < Seq.get < Seq.next <true Seq.next <false Seq.dispose <";
    let t = Trace::new(&["Run"])
        .iterator("Seq")
        .thread(&format!("Run {any} {count} <"));
    assert_eq!(its(&t, &t.run(), "Seq"), (3, 2, 2, 1, 0, 0));
    // Without the values the first reads as completed (nothing read after its MoveNext).
    let plain = "Run Seq Seq.new < < Seq.get < Seq.next < Seq.dispose < <";
    let t = Trace::new(&["Run"]).iterator("Seq").thread(plain);
    assert_eq!(its(&t, &t.run(), "Seq"), (1, 1, 0, 0, 0, 0));
}

/// The trace ends inside a foreach (Environment.Exit): the enumeration is pending, not
/// abandoned; its last yield counts.
#[test]
fn an_enumeration_open_at_the_end_is_pending() {
    let t = Trace::new(&["Run"]).iterator("Seq").thread(&format!(
        "Run Seq Seq.new < < Seq.get < {}",
        reads("Seq", 2)
    ));
    let a = t.run();
    assert_eq!(its(&t, &a, "Seq"), (2, 1, 2, 0, 0, 1));
    assert_eq!(a.totals.open_frames_at_end, 1);
}

/// A trace without the state-machine flags (an older profiler): an iterator is known by its
/// GetEnumerator, seen before its MoveNext runs; an async state machine by its name.
#[test]
fn without_flags_iterators_are_known_by_their_members() {
    let t = Trace::new(&["Run"])
        .iterator_with("Seq", true, false)
        .thread(&format!(
            "Run Seq Seq.new < < Seq.get < {} Seq.next < Seq.dispose < <",
            reads("Seq", 2)
        ));
    assert_eq!(its(&t, &t.run(), "Seq"), (3, 1, 2, 0, 0, 0));
}

/// Async lambdas, async local functions and generic async methods: their state machines'
/// names (`<<Run>b__1_0>d`, `<<Run>g__Local|1_1>d`, `` <Echo>d__5`1 ``) lead to their kickoffs
/// (`<Run>b__1_0` of `<>c`, `<Run>g__Local|1_1`, ``Echo``1``), by the names (an older trace)
/// or by the kickoff's attribute: a MoveNext called by its kickoff starts a logical call.
#[test]
fn async_lambdas_local_functions_and_generic_methods_find_their_kickoffs() {
    let machines = [
        ("Ns.T+<>c", "<Run>b__1_0", "Ns.T+<>c+<<Run>b__1_0>d"),
        ("Ns.T", "<Run>g__Local|1_1", "Ns.T+<<Run>g__Local|1_1>d"),
        ("Ns.T", "Echo``1", "Ns.T+<Echo>d__5`1"),
    ];
    for flags in [false, true] {
        let mut funcs: Vec<(&str, &str, u32, &str)> = vec![("Ns.T", "Run", 0, "")];
        for (ty, kick, sm) in machines {
            let (kf, sf, name) = if flags {
                (F::ASYNC_KICKOFF, F::ASYNC_STATE_MACHINE, sm)
            } else {
                (0, 0, "")
            };
            funcs.push((ty, kick, kf, name));
            funcs.push((sm, "MoveNext", sf, ""));
        }
        let mut b = TraceBuilder::new(eltrace_trace::TraceInfo::new(7));
        for (ty, m, fl, sm) in &funcs {
            b = b.function(Function::new("App.dll", ty, m).flags(*fl).state_machine(sm));
        }
        // Each kickoff called twice; its MoveNext runs at the call and once more (a resume
        // with nothing probed below, on thread 1).
        let mut main = vec![(0, Enter, 0, 0)];
        let mut pool = Vec::new();
        let mut ts = 10;
        for k in [1u32, 3, 5] {
            for _ in 0..2 {
                for (kind, f) in [(Enter, k), (Enter, k + 1), (Leave, k + 1), (Leave, k)] {
                    main.push((ts, kind, f, 0));
                    ts += 10;
                }
                pool.push((ts, Enter, k + 1, 0));
                pool.push((ts + 5, Leave, k + 1, 0));
                ts += 10;
            }
        }
        main.push((ts, Leave, 0, 0));
        let bytes = b
            .thread(0, 100)
            .events_sp(0, &main)
            .thread(1, 101)
            .events_sp(1, &pool)
            .end(ts + 10);
        let a = run(&bytes);
        for k in [2u32, 4, 6] {
            let s = fs(&a, k);
            assert_eq!(
                (s.calls, s.segments, s.resumes),
                (2, 4, 2),
                "flags {flags}: {s:?}"
            );
        }
    }
}

/// An async iterator `G` whose body enumerates an iterator `Seq` it got after an await (as
/// System.Linq.AsyncEnumerable's `GroupBy` does over its lookup): the body's resume that
/// obtains and first moves `Seq`'s enumerator runs from the awaited call's completion (a
/// segment of `Look`), with no `MoveNextAsync` below it; the later moves run under
/// `MoveNextAsync`. The body's recorded `this` keeps the enumerator with `G`'s enumeration:
/// one enumeration of `Seq`, not two.
#[test]
fn an_async_iterator_body_resumed_elsewhere_holds_what_it_obtains() {
    let g = 0x7f00_0000_3000u64;
    let t = Trace::new(&["Run", "Cb"])
        .iterator("Seq")
        .async_iterator("G")
        .async_method("Look")
        .thread(&format!(
            "Run G < G.get < G.anext#{g} G.body#{g} Look Look.next#16 < < < < \
             @100 Cb Look.next#{b} G.body#{g} Seq.get < Seq.next < Seq.cur < < < < \
             @200 G.cur#{g} < G.anext#{g} G.body#{g} Seq.next < Seq.cur < < < G.cur#{g} < \
             G.anext#{g} G.body#{g} Seq.next <false < < G.dispose#{g} < @300 <",
            b = 0x7f00_0000_4040u64
        ));
    let a = t.run();
    assert_eq!(a.totals.unmatched_leaves, 0);
    // 3 MoveNext of Seq, one enumeration: 2 yields, completed.
    assert_eq!(its(&t, &a, "Seq"), (3, 1, 2, 0, 0, 0));
}
