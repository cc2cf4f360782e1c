//! End-to-end tests of `eltrace record --values` on a real .NET process: the probe program of
//! `eltrace check` (crates/cli/src/check/probes, built once per test run) runs under
//! DOTNET_RuntimeAsync=1 and the raw trace is read with `TraceReader`, checking the VALUE
//! records and Value events against the values the program's code passes and returns
//! (AsyncProbe.cs, ValuesProbe.cs).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::Command;

use crate::common::apps::probes_dll;
use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured};
use crate::common::runtimes::Runtime;
use crate::runtimes;
use eltrace_trace::{
    Event, EventKind, FunctionRecord, Record, ThreadIdx, TraceReader, ValueRecord, ValueStatus,
};

/// A trace read back: functions, values, and each thread's events paired with the value of
/// their Value event (just before the event with INFO `values_first`, which eltrace's profiler
/// writes; just after it in older traces).
struct Trace {
    functions: HashMap<u32, FunctionRecord>,
    /// Per thread: (event, captured value) for every non-Value event, in order.
    threads: HashMap<ThreadIdx, Vec<(Event, Option<ValueRecord>)>>,
    value_events: usize,
    value_records: usize,
}

impl Trace {
    fn read(path: &PathBuf) -> Trace {
        let mut r = TraceReader::new(BufReader::new(File::open(path).expect("trace"))).unwrap();
        let mut functions = HashMap::new();
        let mut values: HashMap<u32, ValueRecord> = HashMap::new();
        let mut threads: HashMap<ThreadIdx, Vec<(Event, Option<ValueRecord>)>> = HashMap::new();
        let mut value_events = 0;
        let mut first = false;
        // values_first: a Value event waiting for its Enter or Leave, per thread.
        let mut held: HashMap<ThreadIdx, (Event, ValueRecord)> = HashMap::new();
        while let Some(rec) = r.next_record().expect("readable trace") {
            match rec {
                Record::Info(info) => first = info.values_first(),
                Record::Function(f) => {
                    functions.insert(f.idx.0, f);
                }
                Record::Value(v) => {
                    assert_eq!(v.id as usize, values.len(), "value ids are dense");
                    values.insert(v.id, v);
                }
                Record::Events { thread, events } => {
                    let list = threads.entry(thread).or_default();
                    for e in events {
                        if e.kind == EventKind::Value {
                            value_events += 1;
                            // Streaming order: the VALUE record came before this chunk.
                            let v = values.get(&e.func.0).unwrap_or_else(|| {
                                panic!("Value event #{} before its VALUE record", e.func.0)
                            });
                            if first {
                                let old = held.insert(thread, (e, v.clone()));
                                assert!(old.is_none(), "one value per event: {old:?}");
                                continue;
                            }
                            let last = list.last_mut().expect("a Value event follows an event");
                            assert_eq!(last.0.sp, e.sp, "a Value event repeats the sp");
                            assert!(last.1.is_none(), "one value per event");
                            last.1 = Some(v.clone());
                        } else if e.kind == EventKind::Continuation {
                            list.push((e, None));
                        } else {
                            let v = held.remove(&thread).map(|(ve, v)| {
                                assert!(
                                    matches!(e.kind, EventKind::Enter | EventKind::Leave),
                                    "a Value event before a {:?}",
                                    e.kind
                                );
                                assert_eq!(ve.sp, e.sp, "a Value event has its event's sp");
                                v
                            });
                            list.push((e, v));
                        }
                    }
                }
                _ => {}
            }
        }
        assert!(r.ended(), "the trace is complete");
        assert!(
            held.is_empty(),
            "Value events with no event after them: {held:?}"
        );
        Trace {
            functions,
            threads,
            value_events,
            value_records: values.len(),
        }
    }

    /// The function index of `name` whose flags contain `flag` (0: any).
    fn find(&self, name: &str, flag: u32) -> u32 {
        let found: Vec<u32> = self
            .functions
            .values()
            .filter(|f| f.full_name() == name && f.flags.0 & flag == flag && f.flags.hooked())
            .map(|f| f.idx.0)
            .collect();
        assert_eq!(found.len(), 1, "{name} with flag {flag:#x}: {found:?}");
        found[0]
    }

    /// Values of the `kind` events of function `idx` (all threads).
    fn values_at(&self, kind: EventKind, idx: u32) -> Vec<Option<String>> {
        self.threads
            .values()
            .flatten()
            .filter(|(e, _)| e.kind == kind && e.func.0 == idx)
            .map(|(_, v)| {
                v.as_ref().map(|v| {
                    assert_eq!(v.status, ValueStatus::Ok, "{v:?}");
                    v.text.clone()
                })
            })
            .collect()
    }
}

/// `eltrace record [args] -- dotnet Probes.dll <mode>` with DOTNET_RuntimeAsync=1, on `rt`.
fn record(rt: Runtime, mode: &str, args: &[&str]) -> (TempDir, PathBuf) {
    profiler_library();
    let dll = probes_dll();
    let dir = TempDir::new(&format!("values-{mode}"));
    let trace = dir.path().join("x.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("record")
        .args(args)
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(rt.dotnet())
        .arg(dll)
        .arg(mode)
        .current_dir(dir.path())
        .envs(rt.env())
        .env_remove("ELTRACE_HOOKS")
        .env_remove("ELTRACE_VALUES")
        .env("DOTNET_RuntimeAsync", "1")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1");
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "record");
    assert!(
        status.success() && stdout.contains("probe ok 1"),
        "Probes {mode} under eltrace record {args:?} failed ({status}):\n{stdout}\n{stderr}"
    );
    let mut reader = TraceReader::new(BufReader::new(File::open(&trace).expect("trace"))).unwrap();
    match reader.next_record().expect("readable trace") {
        Some(Record::Info(info)) => {
            assert!(
                info.runtime.starts_with(&rt.description_prefix()),
                "recorded on {:?}, not {rt}",
                info.runtime
            );
            assert!(info.values_first(), "the profiler writes values first");
        }
        other => panic!("the trace starts with {other:?}"),
    }
    (dir, trace)
}

runtimes!(
    async_values_at_initial_enter_and_completion_leave,
    sync_values_of_primitives_strings_and_objects,
    no_values_without_the_flag,
    slow_path_keeps_async_continuations_intact,
);

fn async_values_at_initial_enter_and_completion_leave(rt: Runtime) {
    let (_dir, path) = record(rt, "async", &["--values"]);
    let t = Trace::read(&path);
    let thunk = t.find(
        "Probes.AsyncProbe.Work",
        eltrace_trace::FunctionFlags::ASYNC_THUNK,
    );
    let variant = t.find(
        "Probes.AsyncProbe.Work",
        eltrace_trace::FunctionFlags::ASYNC_VARIANT,
    );

    // Initial Enters of the variant: the previous event on the thread is the thunk's Enter
    // (the Continuation event recorded before the variant's Enter aside).
    let mut initial = Vec::new();
    for list in t.threads.values() {
        let list: Vec<_> = list
            .iter()
            .filter(|(e, _)| e.kind != EventKind::Continuation)
            .collect();
        for w in list.windows(2) {
            let (prev, (e, v)) = (&w[0].0, w[1]);
            if e.kind == EventKind::Enter
                && e.func.0 == variant
                && prev.kind == EventKind::Enter
                && prev.func.0 == thunk
            {
                initial.push(v.as_ref().map(|v| v.text.clone()));
            }
        }
    }
    assert_eq!(initial.len(), 5, "{initial:?}");
    for v in &initial {
        assert!(
            v.as_deref().is_some_and(|s| s.contains("n=4")),
            "{initial:?}"
        );
    }
    // The thunk's Enter carries the argument too, and its Leave the Task object's type.
    for v in t.values_at(EventKind::Enter, thunk) {
        assert_eq!(v.as_deref(), Some("n=4"));
    }
    for v in t.values_at(EventKind::Leave, thunk) {
        assert!(v.as_deref().is_some_and(|s| s.contains("Task")), "{v:?}");
    }

    // Completion Leaves of the variants carry the raw T; Task (non-generic) carries nothing.
    let leaves = |name: &str| {
        let idx = t.find(name, eltrace_trace::FunctionFlags::ASYNC_VARIANT);
        t.values_at(EventKind::Leave, idx)
    };
    assert_eq!(
        leaves("Probes.AsyncProbe.Work"),
        vec![Some("6".to_string()); 5]
    );
    assert_eq!(
        leaves("Probes.AsyncProbe.WorkDouble"),
        vec![Some("2".to_string()); 2]
    );
    assert_eq!(
        leaves("Probes.AsyncProbe.WorkFloat"),
        vec![Some("2".to_string()); 2]
    );
    assert_eq!(leaves("Probes.AsyncProbe.WorkVoid"), vec![None; 2]);
    assert!(t.value_events > 0 && t.value_events <= t.value_records);
}

fn sync_values_of_primitives_strings_and_objects(rt: Runtime) {
    let (_dir, path) = record(rt, "values", &["--values"]);
    let t = Trace::read(&path);
    let one = |kind, name: &str| {
        let v = t.values_at(kind, t.find(name, 0));
        assert_eq!(v.len(), 1, "{name}: {v:?}");
        v[0].clone().unwrap_or_default()
    };
    assert_eq!(
        one(EventKind::Enter, "Probes.ValuesProbe.Mix"),
        r#"this=Probes.ValuesProbe, count=7, ratio=2.5, label="hi \"there\"", payload=Probes.ValuesProbe+Payload"#
    );
    assert_eq!(one(EventKind::Leave, "Probes.ValuesProbe.Mix"), "19");
    assert_eq!(one(EventKind::Enter, "Probes.ValuesProbe.Half"), "x=5");
    assert_eq!(one(EventKind::Leave, "Probes.ValuesProbe.Half"), "2.5");
    assert_eq!(
        one(EventKind::Enter, "Probes.ValuesProbe.Echo"),
        "s=null, c='x', flag=true"
    );
    assert_eq!(one(EventKind::Leave, "Probes.ValuesProbe.Echo"), r#""x!""#);
    assert_eq!(one(EventKind::Leave, "Probes.ValuesProbe.Run"), "true");
}

fn no_values_without_the_flag(rt: Runtime) {
    for args in [&["--slow-path"][..], &[][..]] {
        let (_dir, path) = record(rt, "values", args);
        let t = Trace::read(&path);
        assert_eq!((t.value_events, t.value_records), (0, 0), "{args:?}");
        let mix = t.find("Probes.ValuesProbe.Mix", 0);
        assert_eq!(t.values_at(EventKind::Enter, mix), vec![None], "{args:?}");
    }
}

/// The plain slow path must not break runtime-async methods either: its Leave hook returns
/// with RCX (the async continuation register) = 0 (`record` asserts `probe ok 1`).
fn slow_path_keeps_async_continuations_intact(rt: Runtime) {
    for _ in 0..2 {
        let (_dir, path) = record(rt, "async", &["--slow-path"]);
        let t = Trace::read(&path);
        let variant = t.find(
            "Probes.AsyncProbe.Work",
            eltrace_trace::FunctionFlags::ASYNC_VARIANT,
        );
        assert_eq!(t.values_at(EventKind::Leave, variant).len(), 5);
    }
}
