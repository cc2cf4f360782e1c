//! Stream chunks: events encoded with the reference encoder, cut into chunks at arbitrary
//! event boundaries, framed and read back through the reader are the events that went in, per
//! thread, with the resets as drops where they were; and a stream chunk read with another
//! thread's state or out of order is caught or decodes differently.

use std::io::Cursor as IoCursor;

use super::{CALLEE_HEAD, RUN_HEAD, RUN_MAX, StreamState, flush_run, frame, put_event, put_reset};
use crate::chunks::ChunkBuilder;
use crate::model::{Event, EventKind, FunctionIdx, Record, ThreadIdx, TraceInfo};
use crate::{TraceReader, TraceWriter};

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// What one thread does: events, or a reset after some lost.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Event(Event),
    Dropped(u64),
}

/// A thread's plausible events: nested calls, loops of leaf calls (repeats), tail calls,
/// unwinds of several frames, Leaves with no Enter, catches and throws, recursion past the
/// prediction stack's ring, and now and then a reset.
fn program(seed: u64, n: usize, timeless: bool) -> Vec<Item> {
    program_with(seed, n, timeless, true)
}

/// [`program`]; without `extremes`, no recursion past the ring and no reset.
fn program_with(seed: u64, n: usize, timeless: bool, extremes: bool) -> Vec<Item> {
    let mut x = seed | 1;
    let mut items = Vec::new();
    let mut stack: Vec<(u32, u64)> = Vec::new();
    let mut ts = if timeless { 0 } else { 1_000_000_007 };
    let mut sp = 0x7ffc_0010_0000u64;
    let push = |items: &mut Vec<Item>, kind: EventKind, func: u32, sp: u64, ts: u64| {
        items.push(Item::Event(Event {
            ts,
            kind,
            func: FunctionIdx(func),
            sp,
        }))
    };
    while items.len() < n {
        if !timeless {
            ts += xorshift(&mut x) % 300;
        }
        let r = xorshift(&mut x) % 100;
        let func = (xorshift(&mut x) % 40) as u32 * if r % 7 == 0 { 5000 } else { 1 };
        match r {
            0..=34 => {
                // As in real code, mostly the callee that followed the same event before, at
                // the same SP offset (what the callee table predicts).
                let last = match items.last() {
                    Some(Item::Event(e)) => e.func.0,
                    _ => 0,
                };
                let func = if r % 3 == 0 {
                    func
                } else {
                    last.wrapping_mul(13).wrapping_add(5) % 40
                };
                sp -= 16 + u64::from(func % 8) * 16;
                stack.push((func, sp));
                push(&mut items, EventKind::Enter, func, sp, ts);
            }
            35..=64 => {
                if let Some((f, s)) = stack.pop() {
                    push(&mut items, EventKind::Leave, f, s, ts);
                    sp = s;
                    // A leaf called again and again.
                    for _ in 0..xorshift(&mut x) % 4 {
                        push(&mut items, EventKind::Enter, f, s, ts);
                        push(&mut items, EventKind::Leave, f, s, ts);
                    }
                }
            }
            65..=69 => {
                if let Some((f, s)) = stack.pop() {
                    push(&mut items, EventKind::Tailcall, f, s, ts);
                    stack.push((func, s));
                    push(&mut items, EventKind::Enter, func, s, ts);
                }
            }
            70..=73 => {
                push(&mut items, EventKind::Throw, u32::MAX, sp, ts);
                for _ in 0..(xorshift(&mut x) % 3).min(stack.len() as u64) {
                    let (f, s) = stack.pop().unwrap();
                    push(&mut items, EventKind::Unwind, f, s, ts);
                }
                if let Some(&(f, s)) = stack.last() {
                    push(&mut items, EventKind::Catch, f, s, ts);
                }
            }
            74..=76 => push(&mut items, EventKind::Leave, func, sp + 4096, ts),
            77..=78 => push(&mut items, EventKind::Value, func, sp, ts),
            79..=80 => push(&mut items, EventKind::Continuation, func, 0x1234_5678, ts),
            81 if extremes => {
                // Deeper than the ring, and back.
                let depth = 2100 + (xorshift(&mut x) % 100) as usize;
                for d in 0..depth {
                    sp -= 32;
                    stack.push((d as u32 % 3, sp));
                    push(&mut items, EventKind::Enter, d as u32 % 3, sp, ts);
                }
                for _ in 0..depth {
                    let (f, s) = stack.pop().unwrap();
                    push(&mut items, EventKind::Leave, f, s, ts);
                }
            }
            82 if extremes => {
                items.push(Item::Dropped(1 + xorshift(&mut x) % 1000));
                stack.clear();
            }
            83..=85 => {
                // A frame below the top ends (the frames above it ended unseen, as a
                // runtime-async method's do at a suspension): the format's search finds it.
                let k = 1 + (xorshift(&mut x) % 20) as usize;
                if stack.len() > k {
                    let (f, s) = stack[stack.len() - 1 - k];
                    stack.truncate(stack.len() - 1 - k);
                    push(&mut items, EventKind::Leave, f, s, ts);
                    sp = s;
                }
            }
            _ => {
                sp -= 48;
                push(&mut items, EventKind::Enter, func, sp, ts);
                push(&mut items, EventKind::Leave, func, sp, ts);
                sp += 48;
            }
        }
    }
    items
}

/// Encodes each thread's items, cut into chunks at random event boundaries, the threads'
/// chunks interleaved, into a whole trace.
fn write(threads: &[Vec<Item>], timeless: bool, seed: u64) -> Vec<u8> {
    let info = TraceInfo::new(1);
    let mut w = TraceWriter::new(Vec::new(), &info).unwrap();
    let mut x = seed | 1;
    let mut states: Vec<StreamState> = threads.iter().map(|_| StreamState::default()).collect();
    let mut at = vec![0usize; threads.len()];
    while at.iter().zip(threads).any(|(&a, t)| a < t.len()) {
        let t = (xorshift(&mut x) % threads.len() as u64) as usize;
        let items = &threads[t];
        let take = (1 + xorshift(&mut x) % 300) as usize;
        let end = (at[t] + take).min(items.len());
        if at[t] == end {
            continue;
        }
        let (mut bytes, mut count) = (Vec::new(), 0);
        for item in &items[at[t]..end] {
            count += match item {
                Item::Event(e) => put_event(
                    &mut bytes,
                    &mut states[t],
                    timeless,
                    e.ts,
                    e.kind.code(),
                    e.func.0,
                    e.sp,
                ),
                Item::Dropped(n) => put_reset(&mut bytes, &mut states[t], *n),
            };
        }
        at[t] = end;
        if end == items.len() {
            // The thread's last events: what a run holds goes out (the profiler's writer
            // does so once the thread is gone).
            count += flush_run(&mut bytes, &mut states[t]);
        }
        let mut chunk = Vec::new();
        // Two parts, as a ring's bytes that wrap.
        let cut = (xorshift(&mut x) as usize) % (bytes.len() + 1);
        let times = timeless.then_some((t as u64 * 10, t as u64 * 10 + 9));
        frame(
            &mut chunk,
            ThreadIdx(t as u32),
            count,
            times,
            &[&bytes[..cut], &bytes[cut..]],
        );
        w.write_encoded(&chunk, count).unwrap();
    }
    w.into_inner()
}

/// Each thread's events and drops as the reader gives them.
fn read(bytes: &[u8], threads: usize) -> Vec<Vec<Item>> {
    let mut r = TraceReader::new(IoCursor::new(bytes)).unwrap();
    let mut out = vec![Vec::new(); threads];
    while let Some(rec) = r.next_record().unwrap() {
        match rec {
            Record::Events { thread, events } => {
                out[thread.0 as usize].extend(events.into_iter().map(Item::Event))
            }
            Record::Dropped { thread, count } => out[thread.0 as usize].push(Item::Dropped(count)),
            _ => {}
        }
    }
    out
}

#[test]
fn timed_streams_read_back_as_written() {
    for seed in 1..=20u64 {
        let threads: Vec<_> = (0..3).map(|t| program(seed * 7 + t, 3000, false)).collect();
        let got = read(&write(&threads, false, seed), threads.len());
        for (t, (want, got)) in threads.iter().zip(&got).enumerate() {
            assert_eq!(want.len(), got.len(), "seed {seed} thread {t}");
            assert!(
                want == got,
                "seed {seed} thread {t}: first difference at {:?}",
                want.iter().zip(got).position(|(a, b)| a != b)
            );
        }
    }
}

#[test]
fn timeless_streams_read_back_as_written_but_the_times() {
    let strip = |items: &[Item]| -> Vec<Item> {
        items
            .iter()
            .map(|i| match i {
                Item::Event(e) => Item::Event(Event { ts: 0, ..*e }),
                d => d.clone(),
            })
            .collect()
    };
    for seed in 1..=20u64 {
        let threads: Vec<_> = (0..3).map(|t| program(seed * 11 + t, 3000, true)).collect();
        let got = read(&write(&threads, true, seed), threads.len());
        for (t, (want, got)) in threads.iter().zip(&got).enumerate() {
            // Ordering times lie within each chunk's first and last.
            for i in got {
                if let Item::Event(e) = i {
                    assert!((t as u64 * 10..=t as u64 * 10 + 9).contains(&e.ts));
                }
            }
            assert!(strip(want) == strip(got), "seed {seed} thread {t}");
        }
    }
}

#[test]
fn a_leave_the_stack_predicts_costs_its_head_and_a_loop_two_bytes_per_15_calls() {
    let mut s = StreamState::default();
    let mut b = Vec::new();
    let call = |b: &mut Vec<u8>, s: &mut StreamState, kind: EventKind| {
        put_event(b, s, true, 0, kind.code(), 300, 0x1000)
    };
    assert_eq!(call(&mut b, &mut s, EventKind::Enter), 1);
    let enter = b.len();
    assert_eq!(call(&mut b, &mut s, EventKind::Leave), 1);
    assert_eq!(b.len() - enter, 1, "predicted Leave");
    // A loop: nothing written while the run fills; the repeated Enter after a full run
    // writes its head and count.
    let mut events = 0;
    for _ in 0..RUN_MAX {
        events += call(&mut b, &mut s, EventKind::Enter);
        events += call(&mut b, &mut s, EventKind::Leave);
    }
    assert_eq!((events, b.len() - enter), (0, 1));
    assert_eq!(call(&mut b, &mut s, EventKind::Enter), 2 * RUN_MAX);
    assert_eq!(b[enter + 1..], [RUN_HEAD as u8, RUN_MAX as u8]);
    call(&mut b, &mut s, EventKind::Leave);
    // A shorter run and a repeated Enter waiting for its Leave, written by the next other
    // event (here a Leave of another frame).
    for _ in 0..2 {
        call(&mut b, &mut s, EventKind::Enter);
        call(&mut b, &mut s, EventKind::Leave);
    }
    assert_eq!(call(&mut b, &mut s, EventKind::Enter), 0);
    assert_eq!(s.pending(), 7);
    let at = b.len();
    assert_eq!(
        put_event(&mut b, &mut s, true, 0, EventKind::Leave.code(), 9, 0x2000),
        8
    );
    assert_eq!(b[at..at + 3], [RUN_HEAD as u8, 3, 0x10]);
    assert_eq!(s.pending(), 0);
    // Timed streams have no runs.
    let mut t = StreamState::default();
    for i in 0..10 {
        assert_eq!(put_event(&mut b, &mut t, false, i, 0, 300, 0x1000), 1);
        assert_eq!(put_event(&mut b, &mut t, false, i, 1, 300, 0x1000), 1);
    }
}

/// One timeless chunk of `bytes` holding `count` events, read back (or the reader's error).
fn read_timeless(bytes: &[u8], count: u64) -> Result<Vec<Record>, String> {
    let mut chunk = Vec::new();
    frame(&mut chunk, ThreadIdx(0), count, Some((0, 9)), &[bytes]);
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(1)).unwrap();
    w.write_encoded(&chunk, count).unwrap();
    let trace = w.into_inner();
    let mut r = TraceReader::new(IoCursor::new(&trace[..])).unwrap();
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return Ok(out),
            Err(e) => return Err(e.to_string()),
        }
    }
}

#[test]
fn a_run_reads_as_its_pairs_and_a_wrong_one_is_refused() {
    let (mut b, mut s) = (Vec::new(), StreamState::default());
    let mut n = put_event(&mut b, &mut s, true, 0, 0, 7, 0x100);
    n += put_event(&mut b, &mut s, true, 0, 1, 7, 0x100);
    let head = b.len();
    for _ in 0..5 {
        n += put_event(&mut b, &mut s, true, 0, 0, 7, 0x100);
        n += put_event(&mut b, &mut s, true, 0, 1, 7, 0x100);
    }
    n += flush_run(&mut b, &mut s);
    assert_eq!((n, &b[head..]), (12, &[RUN_HEAD as u8, 5][..]));
    let events: Vec<(EventKind, u32, u64)> = read_timeless(&b, n)
        .unwrap()
        .into_iter()
        .flat_map(|r| match r {
            Record::Events { events, .. } => events,
            _ => Vec::new(),
        })
        .map(|e| (e.kind, e.func.0, e.sp))
        .collect();
    let pair = [(EventKind::Enter, 7, 0x100), (EventKind::Leave, 7, 0x100)];
    assert_eq!(events, pair.repeat(6));
    // A run longer than the events left, a run of none, a run with no frame before it.
    assert!(read_timeless(&b, n - 1).is_err());
    let mut zero = b[..head].to_vec();
    zero.extend_from_slice(&[RUN_HEAD as u8, 0]);
    assert!(read_timeless(&zero, 2).is_err());
    assert!(read_timeless(&[RUN_HEAD as u8, 1], 2).is_err());
}

#[test]
fn a_chunk_decoded_without_its_predecessor_is_refused_or_differs() {
    let threads = vec![program(5, 4000, false)];
    let bytes = write(&threads, false, 9);
    let whole = read(&bytes, 1);
    // Drop the second events chunk: what follows it decodes with the wrong state.
    let mut r = TraceReader::new(IoCursor::new(&bytes[..])).unwrap();
    let mut offsets = Vec::new();
    loop {
        let at = r.offset() as usize;
        match r.next_record() {
            Ok(Some(Record::Events { .. })) => offsets.push(at),
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    let (a, b) = (offsets[1], offsets[2]);
    let mut cut = bytes[..a].to_vec();
    cut.extend_from_slice(&bytes[b..]);
    let mut r = TraceReader::new(IoCursor::new(&cut[..])).unwrap();
    let mut items = Vec::new();
    let mut failed = false;
    loop {
        match r.next_record() {
            Ok(Some(Record::Events { events, .. })) => {
                items.extend(events.into_iter().map(Item::Event))
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(
        failed || items != whole[0],
        "a stream without a chunk read as the whole"
    );
}

/// The first varint's length in `b`.
fn first_varint(b: &[u8]) -> usize {
    b.iter().position(|&x| x < 0x80).unwrap() + 1
}

#[test]
fn a_fresh_stream_codes_events_as_an_events_chunk_does_but_predicted_enters_and_runs() {
    for timeless in [false, true] {
        let (mut predicted, mut runs) = (0, 0);
        for seed in 1..=10u64 {
            let items = program_with(seed, 3000, timeless, false);
            let events: Vec<Event> = items
                .iter()
                .map(|i| match i {
                    Item::Event(e) => *e,
                    Item::Dropped(_) => unreachable!(),
                })
                .collect();
            let (mut stream, mut s) = (Vec::new(), StreamState::default());
            let mut builder = ChunkBuilder::new(ThreadIdx(0), timeless);
            let mut buf = Vec::with_capacity(1 << 20);
            for e in &events {
                put_event(
                    &mut stream,
                    &mut s,
                    timeless,
                    e.ts,
                    e.kind.code(),
                    e.func.0,
                    e.sp,
                );
                assert!(builder.push(&mut buf, e.ts, e.kind.code(), e.func.0, e.sp));
            }
            flush_run(&mut stream, &mut s);
            builder.close(&mut buf);
            // The chunk's events follow its 12-byte head and its prefix's varints (thread,
            // count, first time, and a timeless chunk's last time).
            let mut at = 12;
            for _ in 0..if timeless { 4 } else { 3 } {
                at += first_varint(&buf[at..]);
            }
            let built = &buf[at..];
            // Event by event: the same bytes, but for an Enter the callee table predicts (its
            // head alone, where the chunk has the Enter's head, function and SP) and the first
            // timed delta (the chunk's is from its base time, the stream's from 0), and for a
            // timeless run (two bytes where the chunk has a byte per event).
            let (mut a, mut b, mut i) = (0, 0, 0);
            while i < events.len() {
                if timeless && u64::from(stream[a]) == RUN_HEAD {
                    runs += 1;
                    let n = usize::from(stream[a + 1]);
                    assert!(
                        built[b..b + 2 * n].chunks(2).all(|p| p == [0x10, 0x03]),
                        "seed {seed} event {i}: a run of {n} where the chunk has no pairs"
                    );
                    (a, b, i) = (a + 2, b + 2 * n, i + 2 * n);
                    continue;
                }
                let (ha, hb) = (first_varint(&stream[a..]), first_varint(&built[b..]));
                let (head_a, head_b) = (stream[a], built[b]);
                let full = |h: u8| h & 1 == 0 && (!timeless || h & 0x10 == 0);
                let len_b = if full(head_b) {
                    hb + first_varint(&built[b + hb..])
                        + first_varint(&built[b + hb + first_varint(&built[b + hb..])..])
                } else {
                    hb
                };
                if head_a & 0x0F == CALLEE_HEAD as u8 {
                    predicted += 1;
                    assert_eq!(head_b & 0x0F, 0, "seed {seed} event {i}: not an Enter");
                    assert_eq!(
                        (ha, head_a & 0xF0),
                        (hb, head_b & 0xF0),
                        "seed {seed} event {i}"
                    );
                    assert_eq!(stream[a..a + ha][1..], built[b..b + hb][1..]);
                    a += ha;
                } else {
                    let from = usize::from(!timeless && i == 0) * ha;
                    let from_b = usize::from(!timeless && i == 0) * hb;
                    let len_a = len_b - hb + ha;
                    assert!(
                        stream[a + from..a + len_a] == built[b + from_b..b + len_b],
                        "{} seed {seed} event {i}",
                        if timeless { "timeless" } else { "timed" }
                    );
                    a += len_a;
                }
                b += len_b;
                i += 1;
            }
            assert_eq!((a, b), (stream.len(), built.len()));
        }
        assert!(
            predicted > 200,
            "{predicted} Enters predicted by the callee table"
        );
        assert!(timeless == (runs > 100), "{runs} runs");
    }
}
