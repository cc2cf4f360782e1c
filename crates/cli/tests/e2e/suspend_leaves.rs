//! eltrace gives the same picture of runtime-async programs whether or not the runtime
//! reports a Leave when a method suspends (issue #3, "both kinds of runtime").
//!
//! .NET 10 and .NET 11.0.0 report no Leave at a suspension; runtimes with dotnet/runtime's
//! fix do. Each test records a real runtime-async scenario on each runtime, then
//! writes a second trace from it as such a runtime would have reported it: a Leave (at the
//! segment's own stack pointer) is inserted where each suspended segment ended, right after
//! the segment's last event and before the event that showed it gone, and the INFO record
//! says `async_suspend_leave=1`. Both traces are analysed and must agree on every count:
//! logical calls, segments, resumes, suspensions, pending calls, values. The rewritten trace
//! must also need no reconciliation: no frame ends without a Leave.
//!
//! Where the .NET 10 analysis had to guess (an ambiguous Enter, or resumes of concurrent calls
//! of one method attached by order: `ambiguous_calls`, `inferred_resumes`), the rewrite
//! inherits the guess and linking by order differs between the two kinds of runtime (a Leave
//! may be a completion until a resume shows otherwise): then only the physical counts
//! (segments per function) must agree, and the test says so.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app};
use crate::common::runtimes::Runtime;
use crate::runtimes;
use eltrace_analysis::{Analysis, EndKind, Frame, FrameSink, Options, Tables, analyze_with};
use eltrace_trace::protocol::info_key;
use eltrace_trace::{Event, EventKind, Record, ThreadIdx, TraceReader, TraceWriter};

/// The segments that ended by suspending without a Leave, in the order they closed.
#[derive(Default)]
struct Suspended(Vec<(ThreadIdx, Frame)>);

impl FrameSink for Suspended {
    fn frame(&mut self, _: &Tables, thread: ThreadIdx, frame: &Frame) -> std::io::Result<()> {
        if frame.end == EndKind::Suspend {
            self.0.push((thread, *frame));
        }
        Ok(())
    }
}

fn analyse(path: &Path, sink: &mut dyn FrameSink) -> Analysis {
    let file = BufReader::new(File::open(path).expect("trace"));
    analyze_with(file, &Options::default(), sink).expect("analysis")
}

fn read_all(path: &Path) -> Vec<Record> {
    let mut r = TraceReader::new(BufReader::new(File::open(path).expect("trace"))).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("readable trace") {
        out.push(rec);
    }
    assert!(r.ended(), "the recording is complete");
    out
}

/// Writes `records` to `out` with a Leave inserted for each suspended segment.
fn with_suspension_leaves(records: Vec<Record>, suspended: &[(ThreadIdx, Frame)], out: &Path) {
    let info = match &records[0] {
        Record::Info(i) => i.clone(),
        other => panic!("first record {other:?}"),
    };
    let to_ns = |ticks: u64| info.ns_since_start(ticks);
    // Each thread's events in order, with the chunk each came from and whether it was
    // inserted here.
    let mut threads: HashMap<ThreadIdx, Vec<(usize, Event, bool)>> = HashMap::new();
    for (chunk, rec) in records.iter().enumerate() {
        if let Record::Events { thread, events } = rec {
            let list = threads.entry(*thread).or_default();
            list.extend(events.iter().map(|e| (chunk, *e, false)));
        }
    }
    for (thread, f) in suspended {
        let list = threads.get_mut(thread).expect("the segment's thread");
        // The segment's Enter: the last Enter of its function at its sp at its start time.
        let enter = list
            .iter()
            .rposition(|(_, e, _)| {
                e.kind == EventKind::Enter
                    && e.func.0 == f.func.0
                    && e.sp == f.sp
                    && to_ns(e.ts) == f.start_ns
            })
            .unwrap_or_else(|| panic!("no Enter for the suspended segment {f:?}"));
        // The first later event outside the segment: one after its end, an Enter at or
        // above its sp, or a Leave of a frame below it (a Leave inserted for a frame above
        // it is inside, whatever its time). Value events stay with their event (after it,
        // or before it with INFO values_first).
        let mut at = enter + 1;
        while let Some(&(_, e, inserted)) = list.get(at) {
            let outside = (!inserted && to_ns(e.ts) > f.end_ns)
                || match e.kind {
                    EventKind::Enter => e.sp >= f.sp,
                    EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => e.sp > f.sp,
                    _ => false,
                };
            if outside && e.kind != EventKind::Value {
                break;
            }
            at += 1;
        }
        // With INFO values_first the Value events just before that event (and the
        // Continuation events between) belong to it: the Leave goes before them.
        while info.values_first() && at > enter + 1 && list[at - 1].1.kind.is_annotation() {
            at -= 1;
        }
        let (chunk, prev, _) = list[at - 1];
        let leave = Event {
            ts: prev.ts,
            kind: EventKind::Leave,
            func: f.func,
            sp: f.sp,
        };
        list.insert(at, (chunk, leave, true));
    }
    // Write the records back in their order, each chunk with its events (inserted Leaves
    // included), so that the threads interleave as they did.
    let mut by_chunk: HashMap<usize, Vec<Event>> = HashMap::new();
    for list in threads.into_values() {
        for (chunk, e, _) in list {
            by_chunk.entry(chunk).or_default().push(e);
        }
    }
    let mut info = info;
    info.extra
        .push((info_key::ASYNC_SUSPEND_LEAVE.into(), info_key::YES.into()));
    let mut w = TraceWriter::new(BufWriter::new(File::create(out).unwrap()), &info).unwrap();
    for (chunk, rec) in records.into_iter().enumerate() {
        match rec {
            Record::Info(_) => {}
            Record::Function(f) => w.write_function(&f).unwrap(),
            Record::Thread(t) => w.write_thread(&t).unwrap(),
            Record::Events { thread, .. } => {
                let evs = by_chunk.remove(&chunk).unwrap_or_default();
                w.write_events(thread, &evs).unwrap();
            }
            Record::Dropped { thread, count } => w.write_dropped(thread, count).unwrap(),
            Record::End(e) => w.write_end(&e).unwrap(),
            Record::Value(v) => w.write_value(&v).unwrap(),
            Record::Diagnostic(d) => w.write_diagnostic(&d).unwrap(),
            Record::Waits {
                thread,
                waits,
                wait_ns,
            } => w.write_waits(thread, waits, wait_ns).unwrap(),
            Record::Samples(s) => w.write_samples(&s).unwrap(),
        }
    }
    w.into_inner();
}

/// Segments per function name.
fn segments(a: &Analysis) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = a
        .functions()
        .filter(|(_, s)| s.segments > 0)
        .map(|(idx, s)| (a.tables.functions.name(idx), s.segments))
        .collect();
    v.sort();
    v
}

/// Decisions the analysis took without evidence: ambiguous calls and inferred resumes.
fn guesses(a: &Analysis) -> u64 {
    a.functions()
        .map(|(_, s)| s.ambiguous_calls + s.inferred_resumes)
        .sum()
}

/// Everything but times, per function name.
type Counts = Vec<(String, [u64; 8], Vec<(Option<String>, Option<String>)>)>;

fn counts(a: &Analysis) -> Counts {
    let text = |id: Option<u32>| {
        id.and_then(|i| a.tables.values.get(i))
            .map(|v| v.text.clone())
    };
    let mut out: Counts = a
        .functions()
        .filter(|(_, s)| s.segments > 0)
        .map(|(idx, s)| {
            let samples = a
                .value_samples(idx)
                .iter()
                .map(|v| (text(v.args), text(v.ret)))
                .collect();
            (
                a.tables.functions.name(idx),
                [
                    s.calls,
                    s.segments,
                    s.resumes,
                    s.suspensions,
                    s.pending_at_end,
                    s.unwound,
                    s.tailcalls,
                    s.open_at_end,
                ],
                samples,
            )
        })
        .collect();
    out.sort();
    out
}

/// Returns the number of guessed decisions in the .NET 10 analysis, and whether the per-function
/// counts and the number of logical calls were the same with the Leaves (asserted when nothing
/// was guessed).
fn same_with_suspension_leaves(rt: Runtime, scenario: &str, record_args: &[&str]) -> (u64, bool) {
    let mode = if record_args.contains(&"--values") {
        Mode::Slow
    } else {
        Mode::Fast
    };
    let rec = record_app(
        mode.on(rt),
        async_dll(),
        scenario,
        record_args,
        &[("DOTNET_RuntimeAsync", "1")],
    );
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let mut suspended = Suspended::default();
    let before = analyse(&rec.trace, &mut suspended);
    assert!(
        !suspended.0.is_empty(),
        "{scenario}: no segment suspended, nothing to compare"
    );
    let rewritten = rec.dir.path().join("with-leaves.eltrace");
    with_suspension_leaves(read_all(&rec.trace), &suspended.0, &rewritten);
    let mut none = Suspended::default();
    let after = analyse(&rewritten, &mut none);

    assert_eq!(segments(&before), segments(&after), "{scenario}");
    let guessed = guesses(&before);
    let same_counts = counts(&before) == counts(&after)
        && before.totals.logical_calls == after.totals.logical_calls;
    if !same_counts {
        eprintln!(
            "{scenario}: counts without suspension Leaves:\n{:?}\nwith them:\n{:?}",
            counts(&before),
            counts(&after)
        );
    }
    if guessed == 0 {
        assert_eq!(counts(&before), counts(&after), "{scenario}");
        assert_eq!(
            before.totals.logical_calls, after.totals.logical_calls,
            "{scenario}"
        );
    } else {
        eprintln!(
            "{scenario}: {guessed} resumes or calls linked without evidence on .NET 10: \
             compared the segments only"
        );
    }
    assert_eq!(
        after.totals.events,
        before.totals.events + suspended.0.len() as u64,
        "{scenario}: one Leave per suspension was added"
    );
    // With the Leaves there is nothing left to reconcile.
    assert!(none.0.is_empty(), "{scenario}: {:?}", none.0);
    assert_eq!(after.totals.suspended_frames, 0, "{scenario}");
    for a in [&before, &after] {
        assert_eq!(a.totals.vanished_frames, 0, "{scenario}");
        assert_eq!(a.totals.mismatched_frames, 0, "{scenario}");
        assert_eq!(a.totals.unmatched_leaves, 0, "{scenario}");
    }
    (guessed, same_counts)
}

runtimes!(
    work,
    work_with_values,
    nested,
    configure_await,
    sync_caller,
    exception
);

// The chains of `work`, `sync-caller` and `exception` are linked by evidence: everything must
// be identical.

fn work(rt: Runtime) {
    assert_eq!(same_with_suspension_leaves(rt, "work", &[]).0, 0);
}

fn work_with_values(rt: Runtime) {
    assert_eq!(same_with_suspension_leaves(rt, "work", &["--values"]).0, 0);
}

fn sync_caller(rt: Runtime) {
    assert_eq!(same_with_suspension_leaves(rt, "sync-caller", &[]).0, 0);
}

/// Identical unless the first timer-queue resume on a thread was ambiguous (see `asyncs`).
fn nested(rt: Runtime) {
    same_with_suspension_leaves(rt, "nested", &[]);
}

fn exception(rt: Runtime) {
    assert_eq!(same_with_suspension_leaves(rt, "exception", &[]).0, 0);
}

/// Eight concurrent Workers resumed on pool threads: which waiting Worker a resume continues
/// is attached by order on either kind of runtime (guessed), but the counts of calls,
/// segments, resumes and suspensions per function are the same.
fn configure_await(rt: Runtime) {
    let (_, same_counts) = same_with_suspension_leaves(rt, "configureawait", &[]);
    assert!(
        same_counts,
        "configureawait: counts differ with suspension Leaves"
    );
}
