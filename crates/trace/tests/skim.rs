//! `skim`: the tables and totals of a trace without decoding its events.

use std::io::Cursor;

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ReadError, ThreadIdx,
    ThreadRecord, TraceInfo, TraceWriter, skim,
};

fn sample() -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut info = TraceInfo::new(77);
    info.command = "dotnet App.dll".into();
    let mut w = TraceWriter::new(&mut bytes, &info).unwrap();
    for i in 0..3 {
        w.write_function(&FunctionRecord {
            method: format!("M{i}"),
            ..FunctionRecord::new(FunctionIdx(i))
        })
        .unwrap();
    }
    w.write_thread(&ThreadRecord::new(ThreadIdx(0), 100))
        .unwrap();
    w.write_thread(&ThreadRecord::new(ThreadIdx(1), 101))
        .unwrap();
    let ev = |ts, kind| Event {
        ts,
        kind,
        func: FunctionIdx(1),
        sp: 0x7000,
    };
    let pairs: Vec<Event> = (0..50_000)
        .flat_map(|i| {
            [
                ev(i * 10, EventKind::Enter),
                ev(i * 10 + 5, EventKind::Leave),
            ]
        })
        .collect();
    w.write_events(ThreadIdx(0), &pairs).unwrap(); // two chunks (65536 + 34464)
    w.write_events(ThreadIdx(1), &pairs[..10]).unwrap();
    w.write_dropped(ThreadIdx(1), 7).unwrap();
    w.write_waits(ThreadIdx(0), 3, 4_000).unwrap();
    w.write_waits(ThreadIdx(0), 5, 9_000).unwrap(); // replaces the first
    w.write_diagnostic("memory-cap: test").unwrap();
    w.write_end(&EndRecord {
        reason: EndReason::Shutdown,
        events_written: 100_010,
        events_dropped: 7,
        ..EndRecord::default()
    })
    .unwrap();
    drop(w);
    bytes
}

#[test]
fn skim_counts_without_decoding() {
    let bytes = sample();
    let s = skim(Cursor::new(&bytes)).unwrap();
    assert_eq!(s.info.pid, 77);
    assert_eq!(s.info.command, "dotnet App.dll");
    assert_eq!(s.functions.len(), 3);
    assert_eq!(s.functions[2].method, "M2");
    assert_eq!(s.threads.len(), 2);
    assert_eq!(s.threads[0].record.os_tid, 100);
    assert_eq!((s.threads[0].events, s.threads[1].events), (100_000, 10));
    assert_eq!((s.threads[0].waits, s.threads[0].wait_ns), (5, 9_000));
    assert_eq!(s.threads[1].dropped, 7);
    assert_eq!(s.events(), 100_010);
    assert_eq!(s.dropped(), 7);
    assert_eq!(s.diagnostics, vec!["memory-cap: test".to_string()]);
    assert_eq!(s.end.as_ref().unwrap().events_written, 100_010);
    assert!(!s.truncated);
    assert_eq!(s.bytes, bytes.len() as u64);
}

#[test]
fn skim_of_a_cut_trace_is_truncated() {
    let bytes = sample();
    for cut in [bytes.len() - 1, bytes.len() / 2, 40] {
        let s = skim(Cursor::new(&bytes[..cut])).unwrap();
        assert!(s.truncated, "cut at {cut}");
        assert!(s.end.is_none());
    }
}

#[test]
fn skim_rejects_what_is_not_a_trace() {
    assert!(matches!(
        skim(Cursor::new(b"hello world, not a trace")),
        Err(ReadError::NotATrace)
    ));
    let mut bytes = sample();
    bytes[20] ^= 0xFF; // the INFO chunk's payload: its checksum fails
    assert!(matches!(
        skim(Cursor::new(&bytes)),
        Err(ReadError::Corrupt { .. })
    ));
}

/// Indices the file makes up (huge, doubling) cost an entry each, not a table that long.
#[test]
fn sparse_indices_cost_their_entries() {
    let mut bytes = Vec::new();
    let mut w = TraceWriter::new(&mut bytes, &TraceInfo::new(1)).unwrap();
    let mut idx: Vec<u32> = (16..31).map(|b| 1u32 << b).collect();
    idx.push(u32::MAX - 1);
    for &i in &idx {
        w.write_function(&FunctionRecord::new(FunctionIdx(i)))
            .unwrap();
        w.write_thread(&ThreadRecord::new(ThreadIdx(i), u64::from(i)))
            .unwrap();
        w.write_dropped(ThreadIdx(i), 1).unwrap();
    }
    w.write_function(&FunctionRecord {
        method: "again".into(),
        ..FunctionRecord::new(FunctionIdx(1 << 20))
    })
    .unwrap();
    drop(w);
    let s = skim(Cursor::new(bytes)).unwrap();
    assert_eq!(s.functions.len(), 16);
    assert_eq!(s.functions[4].method, "again");
    assert_eq!(s.threads.len(), 16);
    assert_eq!(s.threads[15].record.os_tid, u64::from(u32::MAX - 1));
    assert_eq!(s.dropped(), 16);
}
