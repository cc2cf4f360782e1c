//! Round trip, truncation and corruption tests for the trace format.

use eltrace_trace::*;

fn sample(n: u32) -> (Vec<u8>, Vec<Event>) {
    let mut bytes = Vec::new();
    let mut info = TraceInfo::new(4242);
    info.runtime = "CoreCLR test".into();
    info.command = "dotnet app.dll".into();
    info.hook_mode = "slow-path".into();
    info.ns_per_tick = 0.5;
    info.extra.push(("custom".into(), "yes".into()));
    let mut w = TraceWriter::new(&mut bytes, &info).unwrap();
    for i in 0..3u32 {
        w.write_function(&FunctionRecord {
            function_id: 0x7f00_0000_0000 + u64::from(i),
            module: "App.dll".into(),
            type_name: format!("Ns.Outer+Inner`{i}"),
            method: format!("M{i}"),
            token: 0x0600_0001 + i,
            impl_flags: if i == 2 { 0x2000 } else { 0 },
            flags: FunctionFlags(if i == 1 {
                FunctionFlags::HOOKED | FunctionFlags::ITERATOR_KICKOFF
            } else {
                FunctionFlags::HOOKED
            }),
            state_machine: if i == 1 {
                "Ns.Outer+<M1>d__1".into()
            } else {
                String::new()
            },
            ..FunctionRecord::new(FunctionIdx(i))
        })
        .unwrap();
    }
    w.write_thread(&ThreadRecord {
        managed_id: 1,
        name: "main".into(),
        ..ThreadRecord::new(ThreadIdx(0), 100)
    })
    .unwrap();
    let mut events = Vec::new();
    let mut ts = 1_000_000u64;
    let mut sp = 0x7fff_0000_1000u64;
    for i in 0..n {
        ts += u64::from(i % 97);
        let kind = if i % 2 == 0 {
            EventKind::Enter
        } else {
            EventKind::Leave
        };
        if kind == EventKind::Enter {
            sp -= 64;
        }
        events.push(Event {
            ts,
            kind,
            func: FunctionIdx(i % 3),
            sp,
        });
        if kind == EventKind::Leave {
            sp += 64;
        }
    }
    w.write_events(ThreadIdx(0), &events).unwrap();
    w.write_dropped(ThreadIdx(0), 7).unwrap();
    w.write_diagnostic("something odd").unwrap();
    w.write_end(&EndRecord {
        reason: EndReason::Abort,
        ts,
        events_written: u64::from(n),
        events_dropped: 7,
        internal_errors: 1,
    })
    .unwrap();
    (bytes, events)
}

fn read_all(bytes: &[u8]) -> Result<(Vec<Record>, bool), ReadError> {
    let mut r = TraceReader::new(bytes)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok((out, r.truncated()))
}

#[test]
fn round_trip_preserves_every_record() {
    let (bytes, events) = sample(200_000);
    let (recs, truncated) = read_all(&bytes).unwrap();
    assert!(!truncated);
    let Record::Info(info) = &recs[0] else {
        panic!("first record is not info")
    };
    assert_eq!(info.pid, 4242);
    assert_eq!(info.ns_per_tick, 0.5);
    assert_eq!(info.runtime, "CoreCLR test");
    assert_eq!(info.extra, vec![("custom".to_string(), "yes".to_string())]);
    let funcs: Vec<_> = recs
        .iter()
        .filter_map(|r| {
            if let Record::Function(f) = r {
                Some(f)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(funcs.len(), 3);
    assert_eq!(funcs[2].full_name(), "Ns.Outer+Inner`2.M2");
    assert_eq!(funcs[2].impl_flags, 0x2000);
    assert_eq!(funcs[1].state_machine, "Ns.Outer+<M1>d__1");
    assert!(funcs[1].flags.iterator_kickoff() && !funcs[1].flags.async_kickoff());
    assert_eq!(funcs[2].state_machine, "");
    let got: Vec<Event> = recs
        .iter()
        .filter_map(|r| {
            if let Record::Events { events, .. } = r {
                Some(events.clone())
            } else {
                None
            }
        })
        .flatten()
        .collect();
    assert_eq!(got, events);
    assert!(recs.contains(&Record::Dropped {
        thread: ThreadIdx(0),
        count: 7
    }));
    assert!(recs.contains(&Record::Diagnostic("something odd".into())));
    let Some(Record::End(end)) = recs.last() else {
        panic!("no end record")
    };
    assert_eq!(end.reason, EndReason::Abort);
    assert_eq!(end.events_dropped, 7);
}

#[test]
fn encoding_is_compact_for_call_heavy_traces() {
    let (bytes, events) = sample(200_000);
    let per_event = bytes.len() as f64 / events.len() as f64;
    assert!(per_event < 5.0, "{per_event} bytes per event");
}

#[test]
fn every_truncation_reads_cleanly_up_to_the_last_whole_chunk() {
    let (bytes, _) = sample(3_000);
    let (full, _) = read_all(&bytes).unwrap();
    // Cut at every byte of the small chunks and at a spread of offsets in the big ones.
    let cuts: Vec<usize> = (12..2000.min(bytes.len()))
        .chain((2000..bytes.len()).step_by(997))
        .collect();
    for cut in cuts {
        let (recs, truncated) =
            read_all(&bytes[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(truncated, "cut at {cut} not reported as truncated");
        assert!(recs.len() < full.len());
        assert_eq!(
            recs[..],
            full[..recs.len()],
            "cut at {cut} changed earlier records"
        );
    }
}

#[test]
fn a_trace_without_end_chunk_is_truncated() {
    let mut bytes = Vec::new();
    let mut w = TraceWriter::new(&mut bytes, &TraceInfo::new(1)).unwrap();
    w.flush().unwrap();
    drop(w);
    let (recs, truncated) = read_all(&bytes).unwrap();
    assert_eq!(recs.len(), 1);
    assert!(truncated);
}

#[test]
fn corruption_is_an_error_never_a_panic() {
    let (bytes, _) = sample(3_000);
    let mut errors = 0;
    for i in (12..bytes.len()).step_by(131) {
        let mut bad = bytes.clone();
        bad[i] ^= 0x5A;
        match read_all(&bad) {
            Err(ReadError::Corrupt { .. }) => errors += 1,
            Err(e) => panic!("flip at {i}: unexpected error {e}"),
            // A flipped length can make the rest look like a cut-short file.
            Ok((_, truncated)) => assert!(truncated, "flip at {i} went unnoticed"),
        }
    }
    assert!(errors > 0);
}

#[test]
fn garbage_and_empty_input_are_not_traces() {
    assert!(matches!(
        TraceReader::new(&b""[..]),
        Err(ReadError::NotATrace)
    ));
    assert!(matches!(
        TraceReader::new(&b"hello world, not a trace"[..]),
        Err(ReadError::NotATrace)
    ));
    let mut v = b"ELTRACE\0".to_vec();
    v.extend_from_slice(&[9, 0, 0, 0]);
    assert!(matches!(
        TraceReader::new(&v[..]),
        Err(ReadError::UnsupportedVersion(9))
    ));
}

#[test]
fn unknown_chunk_kinds_are_skipped() {
    let (bytes, _) = sample(3_000);
    // Insert a chunk of kind 200 right after the header + info chunk.
    let info_len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let at = 12 + 12 + info_len;
    let mut v = bytes[..at].to_vec();
    let payload = [1u8, 2, 3];
    v.push(200);
    v.extend_from_slice(&[0, 0, 0]);
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    // Checksum computed the same way the writer does (CRC-32 IEEE over header[0..8] + payload).
    let crc = {
        let mut c = !0u32;
        for &b in v[v.len() - 8..].iter().chain(&payload) {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    };
    v.extend_from_slice(&crc.to_le_bytes());
    v.extend_from_slice(&payload);
    v.extend_from_slice(&bytes[at..]);
    let (a, _) = read_all(&bytes).unwrap();
    let (b, truncated) = read_all(&v).unwrap();
    assert!(!truncated);
    assert_eq!(a, b);
}

/// A call tree like a recursive program's: nested Enters and Leaves with matching SPs.
fn nested_events(n: usize) -> Vec<Event> {
    fn walk(depth: u32, ts: &mut u64, sp: u64, out: &mut Vec<Event>, n: usize) {
        if out.len() >= n {
            return;
        }
        *ts += 23;
        out.push(Event {
            ts: *ts,
            kind: EventKind::Enter,
            func: FunctionIdx(depth % 5),
            sp,
        });
        if depth < 12 {
            walk(depth + 1, ts, sp - 48, out, n);
            walk(depth + 1, ts, sp - 48, out, n);
        }
        *ts += 17;
        out.push(Event {
            ts: *ts,
            kind: EventKind::Leave,
            func: FunctionIdx(depth % 5),
            sp,
        });
    }
    let mut out = Vec::new();
    let mut ts = 1_000;
    while out.len() < n {
        walk(0, &mut ts, 0x7ffd_1234_5670, &mut out, n);
    }
    out
}

/// Writes `events` as one thread's trace and reads them back; also returns the bytes the
/// events took (the file minus an empty trace).
fn events_round_trip(events: &[Event]) -> (Vec<Event>, usize) {
    let mut empty = TraceWriter::new(Vec::new(), &TraceInfo::new(1)).unwrap();
    empty.write_end(&EndRecord::default()).unwrap();
    let header = empty.into_inner().len();
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(1)).unwrap();
    w.write_events(ThreadIdx(0), events).unwrap();
    w.write_end(&EndRecord::default()).unwrap();
    let bytes = w.into_inner();
    let (recs, truncated) = read_all(&bytes).unwrap();
    assert!(!truncated);
    let got: Vec<Event> = recs
        .into_iter()
        .filter_map(|r| match r {
            Record::Events { events, .. } => Some(events),
            _ => None,
        })
        .flatten()
        .collect();
    (got, bytes.len() - header)
}

#[test]
fn leaves_are_predicted_at_most_four_bytes_per_event() {
    let events = nested_events(300_000);
    let (got, size) = events_round_trip(&events);
    assert_eq!(got, events);
    let per_event = size as f64 / events.len() as f64;
    assert!(per_event <= 4.0, "{per_event} bytes per event");
}

#[test]
fn mismatched_and_unpredictable_events_round_trip() {
    // Leaves of frames opened in an earlier chunk, leaves that match no frame, unwinds with
    // sp 0, catches and throws, a function index of u32::MAX, huge sp jumps.
    let mut events = Vec::new();
    let mut ts = 5u64;
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ts += x % 300;
        let kind = EventKind::from_code((x >> 20) as u8 % 6).unwrap();
        let func = if x % 97 == 0 {
            u32::MAX
        } else {
            (x >> 8) as u32 % 7
        };
        let sp = match (x >> 40) % 4 {
            0 => 0,
            1 => x,
            _ => 0x7ff0_0000_0000 + ((x >> 30) % 16) * 64,
        };
        events.push(Event {
            ts,
            kind,
            func: FunctionIdx(func),
            sp,
        });
    }
    let (got, _) = events_round_trip(&events);
    assert_eq!(got, events);
}

#[test]
fn version_1_traces_are_still_read() {
    // A version-1 trace: header, INFO chunk, one EVENTS chunk with 2 events, END chunk.
    fn chunk(kind: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![kind, 0, 0, 0];
        v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        let mut crc = 0xFFFF_FFFFu32;
        for &b in v.iter().chain(payload) {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        v.extend_from_slice(&(!crc).to_le_bytes());
        v.extend_from_slice(payload);
        v
    }
    let mut bytes = b"ELTRACE\0".to_vec();
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&[0, 0]);
    bytes.extend(chunk(1, &[0]));
    // A FUNCTION as version 1 wrote it, without the later `state_machine`: idx 3, id 0x10,
    // module "A.dll", type "T", method "M", token 1, impl flags 0, flags 1 (HOOKED).
    bytes.extend(chunk(
        2,
        &[
            3, 0x10, 5, b'A', b'.', b'd', b'l', b'l', 1, b'T', 1, b'M', 1, 0, 1,
        ],
    ));
    // thread 0, count 2, base_ts 100; Enter func 3 sp +128 (svar 256 = 0x80 0x02);
    // Leave after 5 ticks (head 5 << 3 | 1 = 41), func 3, dsp 0.
    bytes.extend(chunk(4, &[0, 2, 100, 0, 3, 0x80, 0x02, 41, 3, 0]));
    bytes.extend(chunk(6, &[0, 105, 2, 0, 0]));
    let (recs, truncated) = read_all(&bytes).unwrap();
    assert!(!truncated);
    let f = recs.iter().find_map(|r| match r {
        Record::Function(f) => Some(f.clone()),
        _ => None,
    });
    assert_eq!(
        f.unwrap(),
        FunctionRecord {
            function_id: 0x10,
            module: "A.dll".into(),
            type_name: "T".into(),
            method: "M".into(),
            token: 1,
            flags: FunctionFlags(FunctionFlags::HOOKED),
            ..FunctionRecord::new(FunctionIdx(3))
        }
    );
    let ev = recs.iter().find_map(|r| match r {
        Record::Events { events, .. } => Some(events.clone()),
        _ => None,
    });
    assert_eq!(
        ev.unwrap(),
        vec![
            Event {
                ts: 100,
                kind: EventKind::Enter,
                func: FunctionIdx(3),
                sp: 128
            },
            Event {
                ts: 105,
                kind: EventKind::Leave,
                func: FunctionIdx(3),
                sp: 128
            },
        ]
    );
}

/// Events of a loop calling one function at one SP, `calls` times.
fn loop_calls(calls: u64) -> Vec<Event> {
    (0..calls * 2)
        .map(|i| Event {
            ts: 100 + i * 7,
            kind: if i % 2 == 0 {
                EventKind::Enter
            } else {
                EventKind::Leave
            },
            func: FunctionIdx(3),
            sp: 0x7ffd_0000_1000,
        })
        .collect()
}

fn trace_of(events: &[Event]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = TraceWriter::new(&mut bytes, &TraceInfo::new(1)).unwrap();
    w.write_events(ThreadIdx(0), events).unwrap();
    w.write_end(&EndRecord::default()).unwrap();
    drop(w);
    bytes
}

fn events_of(bytes: &[u8]) -> Result<Vec<Event>, ReadError> {
    let mut r = TraceReader::new(bytes)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        if let Record::Events { events, .. } = rec {
            out.extend(events);
        }
    }
    Ok(out)
}

#[test]
fn repeated_enters_are_version_4_and_older_versions_still_read() {
    // Version 4 (and 5 to 7, which this crate writes): a repeated Enter is its head alone;
    // 1000 calls in a loop take 2 bytes per event.
    let calls = loop_calls(1000);
    let bytes = trace_of(&calls);
    assert_eq!(&bytes[8..10], &7u16.to_le_bytes());
    assert_eq!(events_of(&bytes).unwrap(), calls);
    let mut v4 = bytes.clone();
    v4[8..10].copy_from_slice(&4u16.to_le_bytes());
    assert_eq!(events_of(&v4).unwrap(), calls, "version 4");
    let payload = bytes.len() - trace_of(&[]).len();
    assert!(payload < 2 * calls.len() + 40, "{payload} bytes");
    // The same bytes read as version 2 or 3 are refused (a repeated Enter is not version 2).
    for v in [2u16, 3] {
        let mut old = bytes.clone();
        old[8..10].copy_from_slice(&v.to_le_bytes());
        assert!(events_of(&old).is_err(), "version {v}");
    }
    // A trace without repeats reads the same as version 2, 3, 4, 5 or 6.
    let once = &calls[..2];
    let bytes = trace_of(once);
    for v in [2u16, 3, 4, 5, 6] {
        let mut b = bytes.clone();
        b[8..10].copy_from_slice(&v.to_le_bytes());
        assert_eq!(events_of(&b).unwrap(), once, "version {v}");
    }
}
