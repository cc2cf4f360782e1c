//! Unit tests of a ring's encoded side: records encoded into whole chunks in the outbox and
//! read back, the outbox's limits, a producer and the writer encoding one ring, the leaf-call
//! and loop helpers, and the benchmark's discarding ring.

use super::tests::xorshift;
use super::*;
use std::sync::Arc;

use eltrace_trace::ThreadIdx;

/// The events of whole chunks in `bytes` (after a trace header), and the DROPPED counts.
fn read_chunks(bytes: &[u8], timeless: bool) -> (Vec<eltrace_trace::Event>, Vec<u64>) {
    use eltrace_trace::protocol::{info_key, timing};
    use eltrace_trace::{Record, TraceInfo, TraceReader, TraceWriter};
    let mut info = TraceInfo::new(1);
    if timeless {
        info.extra
            .push((info_key::TIMING.into(), timing::NONE.into()));
    }
    let mut file = Vec::new();
    drop(TraceWriter::new(&mut file, &info).unwrap());
    file.extend_from_slice(bytes);
    let mut r = TraceReader::new(&file[..]).unwrap();
    let (mut events, mut drops) = (Vec::new(), Vec::new());
    while let Some(rec) = r.next_record().unwrap() {
        match rec {
            Record::Events { events: e, .. } => events.extend(e),
            Record::Dropped { count, .. } => drops.push(count),
            _ => {}
        }
    }
    (events, drops)
}

/// What the writer does with a ring's outbox: append the sealed buffers to `out`.
fn take_sealed(r: &Ring, out: &mut Vec<u8>) -> u64 {
    let outbox = r.outbox();
    let mut events = 0;
    for i in outbox.written()..outbox.sealed() {
        // SAFETY: one thread plays the writer here, and `i` is in [written, sealed).
        let slot = unsafe { outbox.sealed_slot(i) };
        out.extend_from_slice(&slot.bytes);
        events += slot.events;
        slot.bytes.clear();
        slot.events = 0;
        outbox.mark_written(i);
    }
    events
}

#[test]
fn encoded_records_read_back_as_events_with_drop_markers() {
    let r = Ring::new(16);
    let mut out = Vec::new();
    let mut n = 0u64;
    for round in 0..3u64 {
        for i in 0..10 {
            let f = (round * 10 + i) as u32;
            assert!(r.try_push(RawRecord::new(1000 + u64::from(f), 0x7000, f, 0)));
            n += 1;
        }
        r.drop_one();
        r.drop_one();
        assert!(r.try_push(RawRecord::new(2000, 0x7000, 99, 1)));
        n += 1;
        let mut c = r.try_consume().unwrap();
        assert!(r.try_consume().is_none(), "one consumer at a time");
        let done = c.encode(r.published());
        assert_eq!((done.records, done.blocked), (12, false));
        assert!(c.seal());
        drop(c);
        assert_eq!(r.fill(), 0);
        take_sealed(&r, &mut out);
    }
    let (events, drops) = read_chunks(&out, false);
    assert_eq!(events.len() as u64, n);
    assert_eq!(drops, vec![2, 2, 2]);
    assert_eq!(r.take_unreported_drops(), 0, "markers reported every drop");
    assert_eq!(events[0].func.0, 0);
    assert_eq!(events[10].func.0, 99);
    assert_eq!(events[11].func.0, 10);
}

#[test]
fn encoding_stops_when_every_buffer_waits_for_the_writer() {
    let r = Ring::new(1 << 16);
    // Distinct functions and stack pointers: about 8 bytes an event, so the two 64 KiB
    // buffers of a test ring hold fewer than 20,000.
    let rec = |i: u64| RawRecord::new(i * 1_000_003, 0x7000_0000 + i * 4096, i as u32, 0);
    for i in 0..40_000 {
        assert!(r.try_push(rec(i)));
    }
    let mut c = r.try_consume().unwrap();
    let done = c.encode(r.published());
    assert!(
        done.blocked && done.sealed == 2 && done.records < 40_000,
        "{done:?}"
    );
    assert!(!r.outbox().has_room());
    drop(c);
    let mut out = Vec::new();
    let mut events = take_sealed(&r, &mut out);
    while r.fill() > 0 {
        let mut c = r.try_consume().unwrap();
        c.encode(r.published());
        c.seal();
        drop(c);
        events += take_sealed(&r, &mut out);
    }
    assert_eq!(events, 40_000);
    let (back, _) = read_chunks(&out, false);
    assert_eq!(back.len(), 40_000);
    assert!(
        back.iter()
            .enumerate()
            .all(|(i, e)| e.func.0 == i as u32 && e.sp == 0x7000_0000 + i as u64 * 4096)
    );
}

/// Encodes what `r` holds unless another thread holds its consumer lock.
fn encode(r: &Ring) {
    if let Some(mut c) = r.try_consume() {
        c.encode(r.published());
    }
}

/// What a lossless producer does (hooks.rs): push; when the ring is full, encode it and push
/// again, else wait for the writer; encode its own ring when half full.
fn push_losslessly(p: &Ring, rec: RawRecord) {
    loop {
        if p.try_push(rec) {
            break;
        }
        encode(p);
        if p.try_push(rec) {
            break;
        }
        if p.prepare_wait() {
            crate::sys::futex_wait(p.waiting_word(), 1, 1_000_000);
        }
        p.count_wait(0);
    }
    if p.above_threshold() {
        encode(p);
    }
}

/// The writer's side of a producer thread's run (writer/drain.rs in small): takes the ring's
/// sealed buffers into `out` and wakes the producer, pass after pass, until the producer has
/// retired and everything is written. Every `flush_every`-th pass it also encodes and seals the
/// ring when the producer does not hold the lock, as a flush does; once the producer has
/// retired, it encodes the ring to its end. `pause` runs between passes. Returns the events
/// taken.
fn play_writer(r: &Ring, out: &mut Vec<u8>, flush_every: Option<u64>, pause: impl Fn()) -> u64 {
    let mut events = 0;
    let mut k = 0u64;
    loop {
        let retired = r.is_retired();
        k += 1;
        let consumer = if retired {
            Some(r.try_consume().unwrap())
        } else if flush_every.is_some_and(|n| k % n == 0) {
            r.try_consume()
        } else {
            None
        };
        if let Some(mut c) = consumer {
            c.encode(r.published());
            c.seal();
        }
        events += take_sealed(r, out);
        r.wake_producer();
        if retired && r.fill() == 0 && r.outbox().sealed() == r.outbox().written() {
            return events;
        }
        pause();
    }
}

#[test]
fn a_producer_encoding_its_own_ring_loses_nothing_to_a_slow_writer() {
    // The producer protocol of hooks.rs (encode when half full, wait when every buffer
    // waits) against a writer thread that takes sealed buffers now and then, timeless.
    let r = Arc::new(Ring::for_thread(256, ThreadIdx(0), true, MIN_BUFFERS, 0));
    let p = Arc::clone(&r);
    const N: u64 = 300_000;
    let t = std::thread::spawn(move || {
        for i in 0..N {
            let rec = RawRecord::new(0, 0x7000 + (i % 7) * 16, (i % 1000) as u32, 0);
            push_losslessly(&p, rec);
        }
        p.retire();
    });
    let mut out = Vec::new();
    let events = play_writer(&r, &mut out, None, || {
        std::thread::sleep(std::time::Duration::from_micros(200))
    });
    t.join().unwrap();
    assert_eq!((events, r.total_drops()), (N, 0));
    let (back, drops) = read_chunks(&out, true);
    assert!(drops.is_empty());
    assert_eq!(back.len() as u64, N);
    assert!(
        back.iter()
            .enumerate()
            .all(|(i, e)| e.func.0 == (i % 1000) as u32)
    );
    assert!(
        back.windows(2).all(|w| w[0].ts <= w[1].ts),
        "ordering times never go back"
    );
}

#[test]
fn a_thread_and_the_writer_encoding_one_ring_keep_every_event() {
    // The thread encodes its own ring when half full; the writer thread flushes (encodes
    // and seals under the lock when it can) and takes sealed buffers; exact times, calls
    // nested as a program makes them.
    let r = Arc::new(Ring::for_thread(512, ThreadIdx(0), false, MIN_BUFFERS, 0));
    let p = Arc::clone(&r);
    const N: u64 = 400_000;
    let t = std::thread::spawn(move || {
        let mut expect = Vec::with_capacity(N as usize);
        let mut stack: Vec<(u32, u64)> = Vec::new();
        let mut x = 0x1234_5678_9abc_def0u64;
        for i in 0..N {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (kind, func, sp) = if stack.is_empty() || x % 3 == 0 || stack.len() < 3 {
                let sp = 0x7fff_0000 - stack.len() as u64 * 32;
                let f = (x % 500) as u32;
                stack.push((f, sp));
                (0, f, sp)
            } else {
                let (f, s) = stack.pop().unwrap();
                (1 + (x % 7 == 0) as u32 * 2, f, s)
            };
            let rec = RawRecord::new(1_000_000 + i * 3, sp, func, kind);
            expect.push((kind, func, sp));
            push_losslessly(&p, rec);
        }
        p.retire();
        expect
    });
    let mut out = Vec::new();
    let events = play_writer(&r, &mut out, Some(3), std::thread::yield_now);
    let expect = t.join().unwrap();
    assert_eq!((events, r.total_drops()), (N, 0));
    let (back, _) = read_chunks(&out, false);
    let got: Vec<(u32, u32, u64)> = back
        .iter()
        .map(|e| (u32::from(e.kind.code()), e.func.0, e.sp))
        .collect();
    assert_eq!(got.len(), expect.len());
    assert!(got == expect, "the events differ");
}

#[test]
fn a_failed_try_consume_leaves_the_holders_lock() {
    let r = Ring::new(16);
    let held = r.try_consume().unwrap();
    assert!(r.try_consume().is_none());
    assert!(
        r.is_consumed(),
        "a failed attempt released the holder's lock"
    );
    drop(held);
    assert!(!r.is_consumed());
    assert!(r.try_consume().is_some());
}

#[test]
fn leave_of_an_enter_is_told_from_the_raw_words() {
    let enter = |f: u32, sp: u64| RawRecord::new(1234, sp, f, 0);
    let rec = |f: u32, sp: u64, kind: u32| RawRecord::new(99_999, sp, f, kind);
    for (f, sp) in [
        (0, 0),
        (1, 0x7fff_1234_5678),
        ((1 << 28) - 1, (1 << 48) - 8),
        (0x10001, 8),
    ] {
        let e = enter(f, sp);
        assert!(rec(f, sp, 1).is_leave_of(e), "{f} {sp:#x}");
        for kind in [0, 2, 3, 4, 5, 6, 7, KIND_DROPPED] {
            assert!(!rec(f, sp, kind).is_leave_of(e), "kind {kind}");
        }
        assert!(!rec(f ^ 1, sp, 1).is_leave_of(e));
        assert!(!rec(f ^ 0x10000, sp, 1).is_leave_of(e));
        assert!(!rec(f, sp ^ 8, 1).is_leave_of(e));
    }
}

#[test]
fn same_event_ignores_the_tick_only() {
    let r = |ts: u64, sp: u64, f: u32, kind: u32| RawRecord::new(ts, sp, f, kind);
    let a = r(5, 0x7fff_0000_1000, 0x0abc_def1, 1);
    assert!(a.same_event(r(999_999, 0x7fff_0000_1000, 0x0abc_def1, 1)));
    assert!(!a.same_event(r(5, 0x7fff_0000_1008, 0x0abc_def1, 1)));
    assert!(!a.same_event(r(5, 0x7fff_0000_1000, 0x0abc_def0, 1)));
    assert!(!a.same_event(r(5, 0x7fff_0000_1000, 0x0bbc_def1, 1)));
    assert!(!a.same_event(r(5, 0x7fff_0000_1000, 0x0abc_def1, 0)));
}

#[test]
fn loops_of_leaf_calls_read_back_as_pushed() {
    // Runs (timeless) and repeated Enters (both) taken from the raw words: loops of one leaf
    // call of every length, between nested calls, a leaf call of another function at the
    // same SP and of the same function at another SP, the loop's function calling another
    // once, encoded at random points.
    for timeless in [true, false] {
        let r = Ring::for_thread(1024, ThreadIdx(0), timeless, BUFFERS, 0);
        let mut pushed = Vec::new();
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut out = Vec::new();
        // Times a second before the clock's now (the encoder extends them from its now), so
        // that the timed runs' heads go through the ring's blocks of four too.
        let mut ts = crate::clock::to_ns(crate::clock::now()) - 1_000_000_000;
        for round in 0..400u64 {
            let (outer, sp) = (
                100 + (round % 3) as u32,
                0x7ff0_0000_1000 - (round % 2) * 64,
            );
            let mut calls = vec![(outer, sp + 64, 0u32)];
            for _ in 0..next(40) {
                let f = if next(9) == 0 { 7 } else { 5 };
                let s = if next(11) == 0 { sp - 16 } else { sp };
                calls.push((f, s, 0));
                if next(13) == 0 {
                    // The loop's function entered again, calling another this time: a pair
                    // whose Enter repeats the run's and whose second record does not.
                    calls.push((9, s - 32, 0));
                    calls.push((9, s - 32, 1));
                }
                calls.push((f, s, 1));
            }
            calls.push((outer, sp + 64, 1));
            for (f, s, kind) in calls {
                // Deltas the blocks take (8-1023 ns) and ones they leave to the loop.
                ts += match next(8) {
                    0 => next(8),
                    1 => 1024 + next(3000),
                    _ => 8 + next(1016),
                };
                let rec = RawRecord::new(ts, s, f, kind);
                assert!(r.try_push(rec));
                pushed.push((kind, f, s, ts));
                if next(50) == 0 || r.fill() > 900 {
                    let mut c = r.try_consume().unwrap();
                    assert!(!c.encode(r.published()).blocked);
                    drop(c);
                    take_sealed(&r, &mut out);
                }
            }
        }
        let mut c = r.try_consume().unwrap();
        c.encode(r.published());
        c.seal();
        drop(c);
        take_sealed(&r, &mut out);
        let (back, drops) = read_chunks(&out, timeless);
        assert!(drops.is_empty());
        // Timed: every time back as pushed (they only grow, so no delta saturates).
        let back: Vec<_> = back
            .iter()
            .map(|e| {
                (
                    u32::from(e.kind.code()),
                    e.func.0,
                    e.sp,
                    (!timeless).then_some(e.ts),
                )
            })
            .collect();
        let want: Vec<_> = pushed
            .iter()
            .map(|&(k, f, s, t)| (k, f, s, (!timeless).then_some(t)))
            .collect();
        assert_eq!(back, want, "timeless {timeless}");
    }
}

#[test]
fn the_writer_is_woken_once_half_of_the_outbox_waits() {
    // A test ring's outbox has two buffers: one sealed is half of them.
    let r = Ring::new(1 << 16);
    assert!(!r.outbox().half_waiting());
    let rec = |i: u64| RawRecord::new(i * 1_000_003, 0x7000_0000 + i * 4096, i as u32, 0);
    // About 8 bytes an event: 12,000 fill one 64 KiB buffer and part of the next.
    for i in 0..12_000 {
        assert!(r.try_push(rec(i)));
    }
    let mut c = r.try_consume().unwrap();
    let done = c.encode(r.published());
    drop(c);
    assert_eq!((done.sealed, done.blocked), (1, false), "{done:?}");
    assert!(r.outbox().half_waiting());
    take_sealed(&r, &mut Vec::new());
    assert!(!r.outbox().half_waiting(), "written: nothing waits");
    // Eight buffers: three sealed do not wake the writer, four do.
    let outbox = Outbox::new(8, 64);
    for sealed in 1..=4 {
        outbox.seal();
        assert_eq!(outbox.half_waiting(), sealed >= 4, "{sealed} sealed of 8");
    }
}

#[test]
fn a_discarding_ring_counts_its_records_as_dropped() {
    let r = Ring::for_thread(64, ThreadIdx(3), false, MIN_BUFFERS, 0).discarding();
    let mut out = Vec::new();
    for round in 0..3u64 {
        for i in 0..20 {
            let f = round * 20 + i;
            assert!(r.try_push(RawRecord::new(f * 10, 0x7000 + f * 16, f as u32, 0)));
        }
        let mut c = r.try_consume().unwrap();
        let done = c.encode(r.published());
        assert_eq!((done.records, done.blocked), (20, false));
        assert!(c.seal());
        drop(c);
        assert_eq!(r.fill(), 0, "the ring is free again");
        take_sealed(&r, &mut out);
    }
    let (events, drops) = read_chunks(&out, false);
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(drops, vec![20, 20, 20]);
}
