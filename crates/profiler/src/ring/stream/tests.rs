//! The Rust side of a stream writes what the format's reference encoder writes (resets
//! included), and what the writer cuts, in pieces around the ring's end, reads back as the
//! events pushed.

use std::io::Cursor;

use eltrace_trace::stream::{StreamState, flush_run, put_event, put_pending, put_reset};
use eltrace_trace::{EventKind, Record, ThreadIdx, TraceInfo, TraceReader, TraceWriter};

use super::Stream;

/// The tests' byte ring: small, so that it wraps often.
const BYTES: usize = 4096;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// `(ts, code, func, sp)` of a plausible thread: calls, loops, tail calls, ends of frames
/// below the top and unmatched Leaves; `None` where events are dropped.
fn program(seed: u64, n: usize) -> Vec<Option<(u64, u8, u32, u64)>> {
    let (mut x, mut ts, mut sp) = (seed | 1, 5_000_000_000u64, 0x7ffc_0100_0000u64);
    let mut stack: Vec<(u32, u64)> = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        ts += xorshift(&mut x) % 200;
        let func = (xorshift(&mut x) % 50) as u32 * 7;
        match xorshift(&mut x) % 20 {
            0..=7 => {
                // Mostly the callee that followed the same event before, at the same SP
                // offset: what the callee table predicts.
                let last = match out.last() {
                    Some(Some((_, _, f, _))) => *f,
                    _ => 0,
                };
                let func = if x % 3 == 0 {
                    func
                } else {
                    (last * 5 + 7) % 350
                };
                sp -= 32 + u64::from(func % 4) * 16;
                stack.push((func, sp));
                out.push(Some((ts, 0, func, sp)));
            }
            8..=14 => {
                if let Some((f, s)) = stack.pop() {
                    out.push(Some((ts, 1, f, s)));
                    // A leaf called in a loop: runs of every length, full ones too.
                    for _ in 0..[1, 1, 3, 17, 40][(xorshift(&mut x) % 5) as usize] {
                        out.push(Some((ts, 0, f, s)));
                        out.push(Some((ts, 1, f, s)));
                    }
                    sp = s + 16;
                }
            }
            15 => {
                if let Some((f, s)) = stack.pop() {
                    out.push(Some((ts, 2, f, s)));
                    stack.push((func, s));
                    out.push(Some((ts, 0, func, s)));
                }
            }
            16 if stack.len() >= 2 => {
                // A frame below the top ends (the ones above it ended unseen).
                let k = 1 + (xorshift(&mut x) as usize) % (stack.len() - 1).min(20);
                let (f, s) = stack[stack.len() - 1 - k];
                stack.truncate(stack.len() - 1 - k);
                out.push(Some((ts, 1, f, s)));
            }
            17 => out.push(Some((ts, 1, func, sp + 0x10000))),
            18 => out.push(Some((ts, EventKind::Value.code(), func, sp))),
            _ if xorshift(&mut x) % 50 == 0 => {
                out.push(None);
                stack.clear();
            }
            _ => {}
        }
    }
    out
}

#[test]
fn pushes_write_the_reference_encoders_bytes() {
    for timeless in [false, true] {
        let items = program(7, 40_000);
        let s = Stream::new(BYTES, 0, true);
        let mut cuts = 0;
        let (mut want, mut state, mut dropped) = (Vec::new(), StreamState::default(), 0);
        for item in &items {
            match *item {
                Some((ts, code, func, sp)) => {
                    if dropped > 0 {
                        put_reset(&mut want, &mut state, dropped);
                        dropped = 0;
                    }
                    put_event(&mut want, &mut state, timeless, ts, code, func, sp);
                    assert!(s.push(timeless, ts, code, func, sp));
                }
                None => {
                    dropped += 1;
                    s.drop_one();
                }
            }
            if s.wants_writer() {
                // Cut and release as the writer does, keeping the bytes.
                let cut = s.cut(s.published(), 0).unwrap();
                let got: Vec<u8> = cut.parts.concat();
                let expected: Vec<u8> = want.drain(..got.len()).collect();
                assert_eq!(got, expected, "timeless {timeless}");
                s.release(cut);
                cuts += 1;
            }
        }
        // What a run holds at the end: the writer writes it (`frame_held`).
        let cut = s.cut(s.published(), 0).unwrap();
        let mut got = cut.parts.concat();
        let mut held = [0u8; 3];
        let n = put_pending(&mut held, s.take_held());
        got.extend_from_slice(&held[..n]);
        flush_run(&mut want, &mut state);
        assert_eq!(got, want, "timeless {timeless}");
        assert!(cuts >= 2, "the ring was cut as it filled");
    }
}

#[test]
fn cuts_read_back_as_the_events_pushed() {
    for timeless in [false, true] {
        let items = program(11, 100_000);
        let s = Stream::new(BYTES, 100, true);
        let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(1)).unwrap();
        let (mut x, mut pushed, mut now) = (99u64, 0u64, 100u64);
        let cut_all = |s: &Stream, w: &mut TraceWriter<Vec<u8>>, now: u64| {
            if let Some(cut) = s.cut(s.published(), now) {
                let mut chunk = Vec::new();
                cut.frame(&mut chunk, ThreadIdx(4), timeless);
                w.write_encoded(&chunk, cut.events).unwrap();
                s.release(cut);
            }
        };
        for item in &items {
            match *item {
                Some((ts, code, func, sp)) => {
                    if !s.push(timeless, ts, code, func, sp) {
                        cut_all(&s, &mut w, now);
                        assert!(s.push(timeless, ts, code, func, sp));
                    }
                    pushed += 1;
                }
                None => {
                    s.drop_one();
                }
            }
            now += 3;
            // Cuts at odd moments, so that chunks start and end anywhere in the ring.
            if xorshift(&mut x) % 500 == 0 {
                cut_all(&s, &mut w, now);
            }
        }
        cut_all(&s, &mut w, now);
        assert_eq!(s.events(), pushed);
        let mut chunk = Vec::new();
        let held = s.frame_held(&mut chunk, ThreadIdx(4), now);
        if held > 0 {
            w.write_encoded(&chunk, held).unwrap();
        }
        let bytes = w.into_inner();
        let mut r = TraceReader::new(Cursor::new(&bytes)).unwrap();
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            match rec {
                Record::Events { thread, events } => {
                    assert_eq!(thread, ThreadIdx(4));
                    got.extend(events.into_iter().map(|e| {
                        Some((
                            if timeless { 0 } else { e.ts },
                            e.kind.code(),
                            e.func.0,
                            e.sp,
                        ))
                    }));
                }
                Record::Dropped { count, .. } => got.extend((0..count).map(|_| None)),
                _ => {}
            }
        }
        let want: Vec<_> = items
            .iter()
            .map(|i| i.map(|(ts, c, f, sp)| (if timeless { 0 } else { ts }, c, f, sp)))
            .collect();
        assert!(
            want == got,
            "timeless {timeless}: {} vs {}",
            want.len(),
            got.len()
        );
        assert!(bytes.len() > 3 * BYTES, "the ring wrapped several times");
    }
}

#[test]
fn the_byte_counts_carry_past_a_tib_is_not_counted_as_an_event() {
    use std::sync::atomic::Ordering::Relaxed;
    let s = Stream::new(BYTES, 0, true);
    s.cut_bytes.store((1 << 40) - 10, Relaxed);
    s.cut_events.store(5, Relaxed);
    // Three events of 30 bytes in all since the cut: the byte count passes 2^40, and its carry
    // adds one to the word's events.
    let word = (((1u64 << 40) + 20) & super::POS40) | ((5 + 3 + 1) << 40);
    assert_eq!(s.since_cut(word), (30, 3));
    // Before the carry, nothing to take off.
    let word = ((1u64 << 40) - 4) | ((5 + 2) << 40);
    assert_eq!(s.since_cut(word), (6, 2));
}

#[test]
fn the_ring_follows_the_buffer_setting_within_its_bounds() {
    use super::{DEFAULT_BYTES, MAX_BYTES, MIN_BYTES, bytes_for_events};
    assert_eq!(bytes_for_events(4096), DEFAULT_BYTES);
    assert_eq!(bytes_for_events(16), 2048);
    assert_eq!(bytes_for_events(1), MIN_BYTES);
    assert_eq!(bytes_for_events(1 << 17), MAX_BYTES);
    assert_eq!(bytes_for_events(3000), DEFAULT_BYTES);
}
