//! Captured values (`record --values`) in both orders of the trace format: a Value event
//! after the event it belongs to (traces without INFO `values_first`) and before it (INFO
//! `values_first`, as the profiler writes them). Each trace is written in the older order and
//! rewritten by `values_moved_first`; both must give the same frames, statistics and value
//! samples, by the quick path and by the full rules.

use eltrace_trace::EventKind::{Continuation, Enter, Leave, Value};
use eltrace_trace::{TraceInfo, ValueStatus};

use super::build::*;
use crate::*;

/// The texts of the values, `#0`..: `v0`, `v1`, …
fn with_values(t: TraceBuilder, n: u32) -> TraceBuilder {
    (0..n).fold(t, |t, id| t.value(id, ValueStatus::Ok, &format!("v{id}")))
}

/// A trace of `funcs` (`(method, token, impl flags, flags)` of `Ns.T`, hooked) with INFO
/// `info`, values `v0`..`v7` and the events of `chunks` (`(thread, events)`) as given.
fn trace(info: TraceInfo, funcs: &[(&str, u32, u32, u32)], chunks: &[(u32, &[Ev])]) -> Vec<u8> {
    let t =
        TraceBuilder::new(info).functions(funcs.iter().map(|&(m, token, impl_flags, flags)| {
            Function::new("App.dll", "Ns.T", m)
                .token(token)
                .impl_flags(impl_flags)
                .flags(eltrace_trace::FunctionFlags::HOOKED | flags)
        }));
    let t = with_values(t, 8).thread(0, 100).thread(1, 101);
    chunks
        .iter()
        .fold(t, |t, &(th, evs)| t.events_sp(th, evs))
        .end(1_000_000)
}

/// [`trace`] of `chunks` written in the older order (each Value after its event), and the
/// same rewritten as the profiler writes it now (INFO `values_first`).
fn both_orders(funcs: &[(&str, u32, u32, u32)], chunks: &[(u32, &[Ev])]) -> [Vec<u8>; 2] {
    let moved: Vec<(u32, Vec<Ev>)> = chunks
        .iter()
        .map(|&(th, evs)| (th, values_moved_first(evs)))
        .collect();
    let moved: Vec<(u32, &[Ev])> = moved.iter().map(|(th, e)| (*th, &e[..])).collect();
    [
        trace(TraceInfo::new(7), funcs, chunks),
        trace(values_first_info(), funcs, &moved),
    ]
}

/// Analyses both orders with and without the quick path; asserts the same results and returns
/// the `values_first` analysis and its frames.
fn same_in_both(traces: &[Vec<u8>; 2]) -> (Analysis, Vec<(ThreadIdx, Frame)>) {
    let opts = Options::default();
    let (want, want_fr) = analyse_records(&traces[0], &opts, false);
    let dbg = |a: &Analysis, fr: &[(ThreadIdx, Frame)]| {
        let samples: Vec<_> = a
            .functions()
            .map(|(f, _)| a.value_samples(f).to_vec())
            .collect();
        let mut edges = a.edges();
        edges.sort_by_key(|(c, f, _)| (c.map(|c| c.0), f.0));
        format!(
            "{:?}\n{:?}\n{edges:?}\n{samples:?}\n{fr:?}",
            a.totals,
            a.functions().collect::<Vec<_>>()
        )
    };
    let mut last = None;
    for (i, bytes) in traces.iter().enumerate() {
        for quick in [false, true] {
            let (a, fr) = analyse_records(bytes, &opts, quick);
            assert_eq!(
                dbg(&a, &fr),
                dbg(&want, &want_fr),
                "values_first {} quick {quick}",
                i == 1
            );
            last = Some((a, fr));
        }
    }
    last.unwrap()
}

fn text(a: &Analysis, id: Option<u32>) -> Option<&str> {
    id.and_then(|i| a.tables.values.get(i))
        .map(|v| v.text.as_str())
}

/// The frames of function `f`: (arguments, return value).
fn frame_values(a: &Analysis, fr: &[(ThreadIdx, Frame)], f: u32) -> Vec<(String, String)> {
    fr.iter()
        .filter(|(_, x)| x.func.0 == f)
        .map(|(_, x)| {
            let s = |id| text(a, id).unwrap_or("-").to_string();
            (s(x.enter_value), s(x.leave_value))
        })
        .collect()
}

/// `Answer()` returns a value and takes no argument, `Print(x)` takes one and returns
/// nothing: in either order each Value goes to its own event, though an Enter, a Value and
/// a Leave follow each other in both.
#[test]
fn arguments_and_return_values_of_ordinary_calls() {
    let funcs = [("Run", 1, 0, 0), ("Answer", 2, 0, 0), ("Print", 3, 0, 0)];
    let evs: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (0, Value, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Leave, 1, 0x8f00),
        (20, Value, 1, 0x8f00),
        (30, Enter, 2, 0x8f00),
        (30, Value, 2, 0x8f00),
        (40, Leave, 2, 0x8f00),
        (50, Leave, 0, 0x9000),
        (50, Value, 3, 0x9000),
    ];
    let (a, fr) = same_in_both(&both_orders(&funcs, &[(0, evs)]));
    let v = |a: &str, r: &str| vec![(a.to_string(), r.to_string())];
    assert_eq!(frame_values(&a, &fr, 0), v("v0", "v3"));
    assert_eq!(frame_values(&a, &fr, 1), v("-", "v1"));
    assert_eq!(frame_values(&a, &fr, 2), v("v2", "-"));
    let s = a.value_samples(FunctionIdx(1));
    assert_eq!(
        (text(&a, s[0].args), text(&a, s[0].ret)),
        (None, Some("v1"))
    );
}

/// A runtime-async call (thunk 1, variant 2) with its Continuation events, completed on
/// another thread after a suspension: the arguments at the initial Enters, the completion's
/// return value on the logical call.
#[test]
fn values_of_a_runtime_async_call() {
    let funcs = [
        ("Run", 0x0600_000b, 0, 0),
        ("L3", 0x0600_0002, 0x2000, THUNK),
        ("L3", 0x0600_0002, 0x2000, VARIANT),
        ("L4", 0x0600_000e, 0, 0),
    ];
    let t0: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (10, Value, 0, 0x8f00),
        (11, Continuation, 2, 0),
        (11, Enter, 2, 0x8e00),
        (11, Value, 1, 0x8e00),
        (20, Enter, 3, 0x8d00),
        (30, Leave, 3, 0x8d00),
        // The variant suspended (no Leave); the thunk returns its Task.
        (40, Leave, 1, 0x8f00),
        (40, Value, 2, 0x8f00),
        (50, Leave, 0, 0x9000),
    ];
    let t1: &[Ev] = &[
        (100, Continuation, 2, 0x4000),
        (100, Enter, 2, 0x7000),
        (100, Value, 3, 0x7000),
        (110, Leave, 2, 0x7000),
        (110, Value, 4, 0x7000),
    ];
    let (a, _) = same_in_both(&both_orders(&funcs, &[(0, t0), (1, t1)]));
    let s = a.value_samples(FunctionIdx(2));
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (text(&a, s[0].args), text(&a, s[0].ret)),
        (Some("v1"), Some("v4"))
    );
}

/// A return value whose Leave is in the thread's next chunk, after another thread's events:
/// held across them (values_first). In the older order the Leave was replayed before its
/// value was read: the value patched the call's value sample, but the frame closed without it.
#[test]
fn a_value_and_its_event_in_different_chunks() {
    let funcs = [("A", 1, 0, 0), ("B", 2, 0, 0)];
    let ms = 1_000_000;
    let chunks = |first: bool| -> Vec<(u32, Vec<Ev>)> {
        let (c0, c2): (Vec<Ev>, Vec<Ev>) = if first {
            (
                vec![
                    (0, Value, 1, 0x9000),
                    (0, Enter, 0, 0x9000),
                    (4, Value, 0, 0x9000),
                ],
                vec![(402 * ms, Leave, 0, 0x9000)],
            )
        } else {
            (
                vec![
                    (0, Enter, 0, 0x9000),
                    (0, Value, 1, 0x9000),
                    (5, Leave, 0, 0x9000),
                ],
                vec![(402 * ms, Value, 0, 0x9000)],
            )
        };
        vec![
            (0, c0),
            (
                1,
                vec![(400 * ms, Enter, 1, 0x7000), (401 * ms, Leave, 1, 0x7000)],
            ),
            (0, c2),
            (
                0,
                vec![(403 * ms, Enter, 0, 0x9000), (404 * ms, Leave, 0, 0x9000)],
            ),
        ]
    };
    for first in [false, true] {
        let c = chunks(first);
        let c: Vec<(u32, &[Ev])> = c.iter().map(|(t, e)| (*t, &e[..])).collect();
        let info = if first {
            values_first_info()
        } else {
            TraceInfo::new(7)
        };
        let bytes = trace(info, &funcs, &c);
        for quick in [true, false] {
            let (a, fr) = analyse_records(&bytes, &Options::default(), quick);
            let at = format!("values_first {first} quick {quick}");
            let s = a.value_samples(FunctionIdx(0));
            assert_eq!(s.len(), 1, "{at}");
            assert_eq!(
                (text(&a, s[0].args), text(&a, s[0].ret)),
                (Some("v1"), Some("v0")),
                "{at}"
            );
            let ret = if first { "v0" } else { "-" };
            assert_eq!(
                frame_values(&a, &fr, 0),
                vec![("v1".into(), ret.into()), ("-".into(), "-".into())],
                "{at}"
            );
        }
    }
}

/// A drop between a value and its event: the value is lost with the thread's stack, not
/// given to the next event.
#[test]
fn a_value_held_before_a_drop_is_lost() {
    let bytes = with_values(b_with(&["A", "B"], values_first_info()), 2)
        .thread(0, 100)
        .events_sp(0, &[(0, Enter, 0, 0x9000), (5, Value, 0, 0x9000)])
        .dropped(0, 3)
        .events_sp(
            0,
            &[
                (10, Enter, 1, 0x8000),
                (20, Value, 1, 0x8000),
                (20, Leave, 1, 0x8000),
            ],
        )
        .end(100);
    for quick in [true, false] {
        let (a, fr) = analyse_records(&bytes, &Options::default(), quick);
        assert_eq!(
            frame_values(&a, &fr, 1),
            vec![("-".into(), "v1".into())],
            "quick {quick}"
        );
        assert!(a.value_samples(FunctionIdx(0)).is_empty(), "quick {quick}");
    }
}
