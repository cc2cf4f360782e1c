//! The Perfetto export: golden files as a decoded text dump (`results/<case>.pftrace.txt`,
//! one packet a line, field names from the .proto files), and its meaning checked against the
//! analysis and the Chrome export: every packet decodes with known fields only, every track
//! is described before use, interned names resolve, each thread's begin/end events nest once
//! sorted by time (stably, as trace_processor sorts), and the slices are exactly the Chrome
//! export's complete events.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use eltrace_export::{ExportOptions, Format, TimeWindow};
use eltrace_trace::testing::traces::{
    basic, drops, nested_async, prefixes, recursion, runtime_async, session,
};
use serde_json::Value;

use crate::support::{check_golden_file, run, run_session};

/// How a field is shown.
#[derive(Clone, Copy)]
enum Kind {
    Uint,
    Str,
    Msg(&'static str),
}

/// The fields the exporter may write, by message (from the Perfetto .proto files).
fn field(msg: &str, num: u64) -> Option<(&'static str, Kind)> {
    use Kind::*;
    Some(match (msg, num) {
        ("Trace", 1) => ("packet", Msg("TracePacket")),
        ("TracePacket", 8) => ("timestamp", Uint),
        ("TracePacket", 10) => ("trusted_packet_sequence_id", Uint),
        ("TracePacket", 11) => ("track_event", Msg("TrackEvent")),
        ("TracePacket", 12) => ("interned_data", Msg("InternedData")),
        ("TracePacket", 13) => ("sequence_flags", Uint),
        ("TracePacket", 60) => ("track_descriptor", Msg("TrackDescriptor")),
        ("TrackDescriptor", 1) => ("uuid", Uint),
        ("TrackDescriptor", 2) => ("name", Str),
        ("TrackDescriptor", 3) => ("process", Msg("ProcessDescriptor")),
        ("TrackDescriptor", 4) => ("thread", Msg("ThreadDescriptor")),
        ("TrackDescriptor", 5) => ("parent_uuid", Uint),
        ("TrackDescriptor", 8) => ("counter", Msg("CounterDescriptor")),
        ("ProcessDescriptor", 1) => ("pid", Uint),
        ("ProcessDescriptor", 2) => ("cmdline", Str),
        ("ProcessDescriptor", 6) => ("process_name", Str),
        ("ThreadDescriptor", 1) => ("pid", Uint),
        ("ThreadDescriptor", 2) => ("tid", Uint),
        ("ThreadDescriptor", 5) => ("thread_name", Str),
        ("TrackEvent", 4) => ("debug_annotations", Msg("DebugAnnotation")),
        ("TrackEvent", 9) => ("type", Uint),
        ("TrackEvent", 10) => ("name_iid", Uint),
        ("TrackEvent", 11) => ("track_uuid", Uint),
        ("TrackEvent", 30) => ("counter_value", Uint),
        ("TrackEvent", 36) => ("flow_ids", Uint),
        ("InternedData", 2) => ("event_names", Msg("EventName")),
        ("InternedData", 3) => ("debug_annotation_names", Msg("EventName")),
        ("EventName", 1) => ("iid", Uint),
        ("EventName", 2) => ("name", Str),
        ("DebugAnnotation", 1) => ("name_iid", Uint),
        ("DebugAnnotation", 2) => ("bool_value", Uint),
        ("DebugAnnotation", 3) => ("uint_value", Uint),
        ("DebugAnnotation", 6) => ("string_value", Str),
        _ => return None,
    })
}

/// A decoded message: its fields in order.
#[derive(Debug, Clone, Default)]
struct Msg {
    fields: Vec<(&'static str, Val)>,
}

#[derive(Debug, Clone)]
enum Val {
    Uint(u64),
    Str(String),
    Msg(Msg),
}

impl Msg {
    fn uint(&self, name: &str) -> Option<u64> {
        self.fields.iter().find_map(|(n, v)| match v {
            Val::Uint(x) if *n == name => Some(*x),
            _ => None,
        })
    }
    fn str(&self, name: &str) -> Option<&str> {
        self.fields.iter().find_map(|(n, v)| match v {
            Val::Str(x) if *n == name => Some(x.as_str()),
            _ => None,
        })
    }
    fn msgs<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Msg> + 'a {
        self.fields.iter().filter_map(move |(n, v)| match v {
            Val::Msg(m) if *n == name => Some(m),
            _ => None,
        })
    }
    fn msg<'a>(&'a self, name: &'a str) -> Option<&'a Msg> {
        self.msgs(name).next()
    }
}

fn varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
    }
    panic!("varint longer than 10 bytes");
}

/// Decodes `buf` as message `ty`; panics on a field the exporter should not write or on a
/// wire type that does not match.
fn decode(ty: &'static str, buf: &[u8]) -> Msg {
    let mut pos = 0;
    let mut msg = Msg::default();
    while pos < buf.len() {
        let key = varint(buf, &mut pos);
        let (num, wire) = (key >> 3, key & 7);
        let (name, kind) =
            field(ty, num).unwrap_or_else(|| panic!("unexpected field {num} in {ty}"));
        let val = match (kind, wire) {
            (Kind::Uint, 0) => Val::Uint(varint(buf, &mut pos)),
            (Kind::Str | Kind::Msg(_), 2) => {
                let len = varint(buf, &mut pos) as usize;
                let data = &buf[pos..pos + len];
                pos += len;
                match kind {
                    Kind::Str => Val::Str(String::from_utf8(data.to_vec()).expect("UTF-8")),
                    Kind::Msg(inner) => Val::Msg(decode(inner, data)),
                    Kind::Uint => unreachable!(),
                }
            }
            _ => panic!("{ty}.{name}: wire type {wire}"),
        };
        msg.fields.push((name, val));
    }
    msg
}

fn dump_msg(m: &Msg, out: &mut String) {
    for (i, (name, v)) in m.fields.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match v {
            Val::Uint(x) => write!(out, "{name}: {x}").unwrap(),
            Val::Str(s) => write!(out, "{name}: {s:?}").unwrap(),
            Val::Msg(inner) => {
                write!(out, "{name} {{ ").unwrap();
                dump_msg(inner, out);
                out.push_str(" }");
            }
        }
    }
}

/// One line per packet.
fn dump(trace: &Msg) -> String {
    let mut out = String::new();
    for p in trace.msgs("packet") {
        dump_msg(p, &mut out);
        out.push('\n');
    }
    out
}

fn export(trace: &[u8], opts: &ExportOptions) -> Msg {
    decode("Trace", &run(Format::Perfetto, trace, opts))
}

#[test]
fn golden_perfetto() {
    let window = ExportOptions {
        window: TimeWindow {
            from: 1_600,
            to: 5_200,
        },
        ..ExportOptions::default()
    };
    for (case, trace, opts) in [
        ("basic", basic(), ExportOptions::default()),
        ("basic-window", basic(), window),
        ("runtime-async", runtime_async(), ExportOptions::default()),
        ("nested-async", nested_async(), ExportOptions::default()),
        ("drops", drops(), ExportOptions::default()),
    ] {
        let text = dump(&export(&trace, &opts));
        check_golden_file(&format!("{case}.pftrace.txt"), text.as_bytes());
    }
}

/// A slice as both exports show it: (tid, start ns, duration ns, name).
type Slice = (u64, u64, u64, String);

/// The slices of a Perfetto export, after checking that it reads as trace_processor reads
/// it. Also returns the flow ids of each slice (its name and start), the instants, and the
/// processes (by pid) with the packet sequence of each.
struct Read {
    slices: Vec<Slice>,
    flows: BTreeMap<u64, Vec<u64>>,
    instants: Vec<(u64, u64, String)>,
    thread_names: BTreeMap<u64, String>,
    processes: BTreeMap<u64, (String, u64)>,
    /// Counter samples: (tid of the track's thread, counter name, ts, value).
    counters: Vec<(u64, String, u64, u64)>,
}

/// The Perfetto export of `trace` read back: see [`Read`].
fn read(trace: &Msg) -> Read {
    let mut r = Reader::default();
    for (i, p) in trace.msgs("packet").enumerate() {
        let seq = r.sequence(i, p);
        r.interned(seq, p);
        r.track(seq, p);
        r.event(i, seq, p);
    }
    r.finish()
}

/// An event as the export wrote it: (ts, file order, tid, begin?, name, flows).
type Event = (u64, usize, u64, bool, String, Vec<u64>);

/// What [`read`] gathers packet by packet, checking each as trace_processor would.
#[derive(Default)]
struct Reader {
    // Interned names are per packet sequence: (sequence, iid) → name.
    names: HashMap<(u64, u64), String>,
    annotation_names: HashMap<(u64, u64), String>,
    // Track uuids are global: uuid → (pid, tid), tid 0 for a process's track.
    tracks: HashMap<u64, (u64, u64)>,
    // Counter tracks: uuid → (tid of the thread track it is under, name).
    counter_tracks: HashMap<u64, (u64, String)>,
    counters: Vec<(u64, String, u64, u64)>,
    thread_names: BTreeMap<u64, String>,
    processes: BTreeMap<u64, (String, u64)>,
    sequences: Vec<u64>,
    events: Vec<Event>,
    instants: Vec<(u64, u64, String)>,
}

impl Reader {
    /// The sequence of packet `i` (`p`): a process's packets are one sequence, after the
    /// previous process's, and only a sequence's first packet clears its state.
    fn sequence(&mut self, i: usize, p: &Msg) -> u64 {
        let seq = p.uint("trusted_packet_sequence_id").expect("a sequence");
        if self.sequences.last() != Some(&seq) {
            assert!(
                !self.sequences.contains(&seq),
                "sequence {seq} resumed at packet {i}"
            );
            self.sequences.push(seq);
            assert_eq!(p.uint("sequence_flags"), Some(1), "{p:?}");
        } else {
            assert_eq!(
                p.uint("sequence_flags"),
                None,
                "only a sequence's first packet clears its state: {p:?}"
            );
        }
        seq
    }

    /// The names `p` interns, each once per sequence.
    fn interned(&mut self, seq: u64, p: &Msg) {
        if let Some(interned) = p.msg("interned_data") {
            for (field, map) in [
                ("event_names", &mut self.names),
                ("debug_annotation_names", &mut self.annotation_names),
            ] {
                for e in interned.msgs(field) {
                    let iid = e.uint("iid").unwrap();
                    let old = map.insert((seq, iid), e.str("name").unwrap().into());
                    assert!(old.is_none(), "iid interned twice: {e:?}");
                }
            }
        }
    }

    /// The track `p` describes: a counter under a thread's track, a process's or a thread's.
    fn track(&mut self, seq: u64, p: &Msg) {
        let Some(d) = p.msg("track_descriptor") else {
            return;
        };
        let uuid = d.uint("uuid").unwrap();
        if d.msg("counter").is_some() {
            let parent = d.uint("parent_uuid").expect("a counter under a thread");
            let (_, tid) = self.tracks[&parent];
            assert!(tid != 0, "a counter under a process track");
            assert!(
                !self.tracks.contains_key(&uuid),
                "counter {uuid} is a track's uuid"
            );
            let name = d.str("name").unwrap().to_owned();
            assert!(self.counter_tracks.insert(uuid, (tid, name)).is_none());
            return;
        }
        assert!(
            !self.counter_tracks.contains_key(&uuid),
            "track {uuid} is a counter's"
        );
        let owner = if let Some(pr) = d.msg("process") {
            let pid = pr.uint("pid").unwrap();
            let name = pr.str("process_name").unwrap().to_owned();
            assert!(
                self.processes.insert(pid, (name, seq)).is_none(),
                "{pid} twice"
            );
            (pid, 0)
        } else {
            let t = d.msg("thread").expect("a process or a thread track");
            let pid = t.uint("pid").unwrap();
            assert_eq!(self.processes.get(&pid).map(|p| p.1), Some(seq), "{t:?}");
            let tid = t.uint("tid").unwrap();
            assert!(tid <= i32::MAX as u64);
            self.thread_names
                .insert(tid, t.str("thread_name").unwrap().to_owned());
            (pid, tid)
        };
        let old = self.tracks.insert(uuid, owner);
        assert!(
            old.is_none_or(|o| o == owner),
            "track {uuid} of {old:?} and {owner:?}"
        );
    }

    /// The track event of packet `i` (`p`), if any: a counter sample, a slice's begin or
    /// end, or an instant, on a track described before.
    fn event(&mut self, i: usize, seq: u64, p: &Msg) {
        let Some(e) = p.msg("track_event") else {
            return;
        };
        if e.uint("type") == Some(4) {
            let uuid = e.uint("track_uuid").unwrap();
            let (tid, name) = self
                .counter_tracks
                .get(&uuid)
                .unwrap_or_else(|| panic!("counter {uuid} used before it is described"));
            let ts = p
                .uint("timestamp")
                .expect("a counter sample has a timestamp");
            let sample = (*tid, name.clone(), ts, e.uint("counter_value").unwrap());
            self.counters.push(sample);
            return;
        }
        let ts = p.uint("timestamp").expect("an event has a timestamp");
        let uuid = e.uint("track_uuid").unwrap();
        let (_, tid) = *self
            .tracks
            .get(&uuid)
            .unwrap_or_else(|| panic!("track {uuid} used before it is described"));
        assert!(tid != 0, "an event on a process track");
        for a in e.msgs("debug_annotations") {
            assert!(
                self.annotation_names
                    .contains_key(&(seq, a.uint("name_iid").unwrap()))
            );
        }
        let name = e.uint("name_iid").map(|iid| {
            self.names
                .get(&(seq, iid))
                .unwrap_or_else(|| panic!("name {iid} used before it is interned"))
                .clone()
        });
        let flows: Vec<u64> = e
            .fields
            .iter()
            .filter_map(|(n, v)| match (n, v) {
                (&"flow_ids", Val::Uint(id)) => Some(*id),
                _ => None,
            })
            .collect();
        match e.uint("type") {
            Some(1) => self.events.push((ts, i, tid, true, name.unwrap(), flows)),
            Some(2) => {
                assert!(name.is_none() && flows.is_empty());
                self.events.push((ts, i, tid, false, String::new(), flows))
            }
            Some(3) => self.instants.push((tid, ts, name.unwrap())),
            t => panic!("event type {t:?}"),
        }
    }

    /// The slices, each begin paired with its end on the same thread, and the flows of each.
    fn finish(mut self) -> Read {
        // trace_processor sorts by timestamp and keeps the file's order among equal ones.
        self.events.sort_by_key(|e| (e.0, e.1));
        let mut open: HashMap<u64, Vec<(u64, String)>> = HashMap::new();
        let mut slices = Vec::new();
        let mut flows: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (ts, _, tid, begin, name, f) in self.events {
            let stack = open.entry(tid).or_default();
            if begin {
                for id in f {
                    flows.entry(id).or_default().push(ts);
                }
                stack.push((ts, name));
            } else {
                let (start, name) = stack.pop().expect("an end without a begin");
                slices.push((tid, start, ts - start, name));
            }
        }
        assert!(open.values().all(Vec::is_empty), "slices left open");
        slices.sort();
        Read {
            slices,
            flows,
            instants: self.instants,
            thread_names: self.thread_names,
            processes: self.processes,
            counters: self.counters,
        }
    }
}

/// The complete events of the Chrome export of `trace`.
fn chrome_slices(trace: &[u8]) -> Vec<Slice> {
    let v: Value =
        serde_json::from_slice(&run(Format::Chrome, trace, &ExportOptions::default())).unwrap();
    let ns = |v: &Value| (v.as_f64().unwrap() * 1000.0).round() as u64;
    let mut s: Vec<Slice> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                ns(&e["ts"]),
                ns(&e["dur"]),
                e["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    s.sort();
    s
}

#[test]
fn perfetto_reads_as_the_chrome_export() {
    for trace in [
        basic(),
        recursion(),
        prefixes(),
        runtime_async(),
        nested_async(),
        drops(),
    ] {
        let r = read(&export(&trace, &ExportOptions::default()));
        assert_eq!(r.slices, chrome_slices(&trace));
        assert_eq!(
            r.processes,
            BTreeMap::from([(4242, ("App.dll".to_owned(), 1))])
        );
    }
}

/// Each logical call's segments carry its flow; names are the runtime's, `main` for the
/// thread whose tid is the pid.
#[test]
fn perfetto_flows_and_names() {
    let r = read(&export(&nested_async(), &ExportOptions::default()));
    // Outer's segments at 200 and 1600, Inner's at 250 and 1000.
    assert_eq!(
        r.flows.into_iter().collect::<Vec<_>>(),
        vec![(1, vec![200, 1_600]), (2, vec![250, 1_000]),]
    );
    assert_eq!(
        r.thread_names.into_iter().collect::<Vec<_>>(),
        vec![(4242, "main".into()), (4250, ".NET TP Worker".into())]
    );
}

/// Drops are instants on their thread at the drop (the thread's last event before the loss),
/// also where no frame was open (thread 5000 lost events after its event at 80).
#[test]
fn perfetto_marks_drops() {
    let r = read(&export(&drops(), &ExportOptions::default()));
    assert_eq!(
        r.instants,
        vec![
            (4242, 100, "events dropped".to_owned()),
            (5000, 80, "events dropped".to_owned())
        ]
    );
}

/// The thread named after its first frames is described again with its name.
#[test]
fn perfetto_renames_late_named_threads() {
    let r = read(&export(&basic(), &ExportOptions::default()));
    assert_eq!(r.thread_names[&1001], "Main");
}

/// A session of two processes in one trace: a packet sequence per process (each interning
/// its own names), track uuids that differ, the later process moved by its start, flows
/// that stay apart, and the same slices as each process exported alone.
#[test]
fn perfetto_session_is_both_processes() {
    let traces = session();
    let out = run_session(Format::Perfetto, &traces, &ExportOptions::default());
    let trace = decode("Trace", &out);
    check_golden_file("session.pftrace.txt", dump(&trace).as_bytes());
    let r = read(&trace);
    assert_eq!(
        r.processes,
        BTreeMap::from([
            (4242, ("App.dll".to_owned(), 1)),
            (4300, ("csc.dll".to_owned(), 2))
        ])
    );
    let mut expected = Vec::new();
    for (t, offset) in traces.iter().zip([0, 1_500]) {
        let alone = read(&export(t, &ExportOptions::default()));
        expected.extend(
            alone
                .slices
                .into_iter()
                .map(|(tid, ts, dur, name)| (tid, ts + offset, dur, name)),
        );
    }
    expected.sort();
    assert_eq!(r.slices, expected);
    // App's Work at 200 and 1000; csc's at 60 and 700, 1.5 µs later.
    assert_eq!(
        r.flows.into_iter().collect::<Vec<_>>(),
        vec![(1, vec![200, 1_000]), (2, vec![1_560, 2_200])]
    );
    assert_eq!(r.instants, vec![(4301, 2_400, "events dropped".to_owned())]);
    // csc's threads waited for the writer: 0 at their first event, the totals at their last.
    let c = |tid, name: &str, ts, v| (tid, name.to_owned(), ts, v);
    assert_eq!(
        r.counters,
        vec![
            c(4300, "writer waits: main (4300)", 1_500, 0),
            c(4300, "writer waits: main (4300)", 3_500, 3),
            c(4300, "writer wait ns: main (4300)", 1_500, 0),
            c(4300, "writer wait ns: main (4300)", 3_500, 12_000),
            c(4301, "writer waits: .NET TP Worker (4301)", 2_200, 0),
            c(4301, "writer waits: .NET TP Worker (4301)", 2_800, 1),
            c(4301, "writer wait ns: .NET TP Worker (4301)", 2_200, 0),
            c(4301, "writer wait ns: .NET TP Worker (4301)", 2_800, 2_000),
        ]
    );
}
