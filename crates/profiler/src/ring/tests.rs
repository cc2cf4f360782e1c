//! Unit tests of the ring: record packing, the byte layout the stubs write, tick extension,
//! and the queue's push, wait and drain (its encoding into the outbox: encode_tests.rs).

use super::*;
use std::sync::Arc;

/// A small deterministic generator: `next(n)` is in `0..n`.
pub(super) fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

fn rec(i: u64) -> RawRecord {
    RawRecord::new(i, i * 16, i as u32, 0)
}

#[test]
fn records_pack_and_unpack() {
    let r = RawRecord::new(0xABCD_1234_5678_9ABC, 0x7ffc_c08a_1a70, 0x0FED_CBA9, 6);
    assert_eq!(r.time48(), 0x1234_5678_9ABC);
    assert_eq!(r.sp(), 0x7ffc_c08a_1a70);
    assert_eq!(r.func(), 0x0FED_CBA9);
    assert_eq!(r.kind(), 6);
    let m = RawRecord::new(5, 1 << 40, 0, KIND_DROPPED);
    assert_eq!((m.kind(), m.sp(), m.func()), (KIND_DROPPED, 1 << 40, 0));
    // The layout the stubs write: tick and sp as words, the key's halves at +6 and +14.
    let key: u32 = 0x0123_4567 | (1 << FUNC_BITS);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&0x0000_1111_2222_3333u64.to_le_bytes());
    bytes[8..].copy_from_slice(&0x0000_7fff_0000_1000u64.to_le_bytes());
    assert_eq!((stub::KEY_LO, stub::KEY_HI, stub::KEY_HALF), (6, 14, 16));
    bytes[6..8].copy_from_slice(&(key as u16).to_le_bytes());
    bytes[14..16].copy_from_slice(&((key >> 16) as u16).to_le_bytes());
    // SAFETY: RawRecord is two plain u64 words (repr(C), 16 bytes); any bits are valid.
    let r: RawRecord = unsafe { core::mem::transmute(bytes) };
    assert_eq!(
        r,
        RawRecord::new(0x1111_2222_3333, 0x7fff_0000_1000, 0x0123_4567, 1)
    );
}

#[test]
fn ticks_are_extended_from_the_drain_time() {
    let now = 0x0005_0000_0000_0100u64;
    // Earlier in the same 2^48 window, and just before a wrap of the low bits.
    assert_eq!(extend48(0x0000_0000_0050, now), now - 0xB0);
    assert_eq!(extend48(LOW48 - 9, now), 0x0004_FFFF_FFFF_FFF6);
    // A few ticks after `now` (another CPU's clock).
    assert_eq!(extend48(0x0000_0000_0110, now), now + 0x10);
    assert_eq!(extend48(now & LOW48, now), now);
    assert_eq!(extend48(7, 10), 7);
}

#[test]
fn capacity_rounds_up() {
    assert_eq!(Ring::rounded_capacity(0), 2);
    assert_eq!(Ring::rounded_capacity(32768), 32768);
    assert_eq!(Ring::rounded_capacity(1000), 1024);
}

#[test]
fn push_and_drain_wraps() {
    let r = Ring::new(4);
    let mut out = Vec::new();
    for round in 0..5u64 {
        for i in 0..3 {
            r.push(rec(round * 10 + i));
        }
        r.drain_to(r.published(), &mut out);
    }
    assert_eq!(out.len(), 15);
    assert_eq!(out[14], rec(42));
    assert_eq!(r.total_drops(), 0);
}

#[test]
fn full_ring_drops_and_marks() {
    let r = Ring::new(4);
    for i in 0..7 {
        r.push(rec(i));
    }
    assert_eq!(r.total_drops(), 3);
    assert_eq!(r.pending_drops(), 3);
    let mut out = Vec::new();
    r.drain_to(r.published(), &mut out);
    assert_eq!(out.len(), 4);
    r.push(rec(100));
    assert_eq!(r.pending_drops(), 0);
    r.drain_to(r.published(), &mut out);
    assert_eq!(out.len(), 6);
    assert_eq!(out[4].kind(), KIND_DROPPED);
    assert_eq!(out[4].sp(), 3);
    assert_eq!(out[5], rec(100));
}

#[test]
fn inline_limit_follows_pending_drops() {
    let r = Ring::new(4);
    assert_eq!(r.inline_limit(), 2);
    r.push(rec(0));
    assert!(!r.above_threshold());
    r.push(rec(1));
    assert!(r.above_threshold());
    r.push(rec(2));
    r.push(rec(3));
    r.push(rec(4)); // dropped
    assert_eq!(r.inline_limit(), 0);
    let mut out = Vec::new();
    r.drain_to(r.published(), &mut out);
    r.push(rec(5)); // marker + record
    assert_eq!(r.inline_limit(), 2);
    assert_eq!(Ring::new(0).inline_limit(), 0);
}

#[test]
fn a_ring_without_inline_writes_keeps_its_limit_at_zero() {
    let r = Ring::new(4).without_inline_writes();
    assert_eq!(r.inline_limit(), 0);
    for i in 0..5 {
        r.push(rec(i)); // the fifth is dropped
    }
    let mut out = Vec::new();
    r.drain_to(r.published(), &mut out);
    r.push(rec(5)); // marker + record
    assert_eq!(r.pending_drops(), 0);
    assert_eq!(r.inline_limit(), 0);
    // The writer is still woken at half full.
    assert!(r.above_threshold());
}

#[test]
fn marker_needs_two_slots() {
    let r = Ring::new(2);
    r.push(rec(0));
    r.push(rec(1));
    r.push(rec(2)); // dropped
    let mut out = Vec::new();
    r.drain_to(r.published() - 1, &mut out); // one slot free only
    r.push(rec(3)); // still dropped: marker + record need 2
    assert_eq!(r.total_drops(), 2);
    r.drain_to(r.published(), &mut out);
    r.push(rec(4));
    r.drain_to(r.published(), &mut out);
    let kinds: Vec<u32> = out.iter().map(|r| r.kind()).collect();
    assert_eq!(kinds, vec![0, 0, KIND_DROPPED, 0]);
    assert_eq!(out[2].sp(), 2);
}

#[test]
fn zero_capacity_only_counts() {
    let r = Ring::new(0);
    r.push(rec(1));
    r.push(rec(2));
    let mut out = Vec::new();
    r.drain_to(r.published(), &mut out);
    assert!(out.is_empty());
    assert_eq!(r.total_drops(), 2);
}

#[test]
fn concurrent_spsc_keeps_order_and_count() {
    let r = Arc::new(Ring::new(64));
    let p = Arc::clone(&r);
    const N: u64 = 200_000;
    let t = std::thread::spawn(move || {
        for i in 0..N {
            p.push(rec(i));
        }
    });
    let mut out = Vec::new();
    let mut done = false;
    while !done {
        done = t.is_finished();
        r.drain_to(r.published(), &mut out);
    }
    t.join().unwrap();
    r.drain_to(r.published(), &mut out);
    let mut seen = 0u64;
    let mut dropped_marked = 0u64;
    let mut last = None;
    for x in &out {
        if x.kind() == KIND_DROPPED {
            dropped_marked += x.sp();
            continue;
        }
        if let Some(l) = last {
            assert!(x.time48() > l);
        }
        last = Some(x.time48());
        seen += 1;
    }
    assert_eq!(seen + r.total_drops(), N);
    assert_eq!(dropped_marked + r.pending_drops(), r.total_drops());
}

#[test]
fn try_push_refuses_a_full_ring_without_counting() {
    let r = Ring::new(4);
    for i in 0..4 {
        assert!(r.try_push(rec(i)));
    }
    assert!(!r.try_push(rec(4)));
    assert_eq!((r.total_drops(), r.pending_drops(), r.fill()), (0, 0, 4));
    // Full, but the producer could encode into a free outbox buffer: no wait.
    assert!(!r.prepare_wait(), "the producer can encode");
    let other = r.try_consume().unwrap();
    assert!(
        r.prepare_wait(),
        "full and locked by another consumer: the producer must wait"
    );
    assert_eq!(r.waiting_word().load(Ordering::Relaxed), 1);
    let mut out = Vec::new();
    r.drain_to_max(r.published(), 1, &mut out);
    assert_eq!(out, vec![rec(0)]);
    drop(other);
    // Releasing slots clears the waiting word (and wakes the futex).
    assert_eq!(r.waiting_word().load(Ordering::Relaxed), 0);
    assert!(!r.prepare_wait(), "room: nothing to wait for");
    r.count_wait(1234);
    assert_eq!(r.waits(), (1, 1234));
    assert!(r.try_push(rec(4)));
}

#[test]
fn lossless_producer_waits_and_loses_nothing() {
    // The producer protocol of writer::wait_for_room, against a slow consumer.
    let r = Arc::new(Ring::new(64));
    let p = Arc::clone(&r);
    const N: u64 = 100_000;
    let t = std::thread::spawn(move || {
        for i in 0..N {
            while !p.try_push(rec(i)) {
                if p.prepare_wait() {
                    crate::sys::futex_wait(p.waiting_word(), 1, 1_000_000);
                }
                p.count_wait(0);
            }
        }
    });
    let mut out = Vec::new();
    while out.len() < N as usize {
        r.drain_to_max(r.published(), 7, &mut out);
        std::thread::yield_now();
    }
    t.join().unwrap();
    assert_eq!(r.total_drops(), 0);
    assert!(out.iter().enumerate().all(|(i, x)| *x == rec(i as u64)));
    assert!(
        r.waits().0 > 0,
        "a 64-record ring must have made the producer wait"
    );
}
