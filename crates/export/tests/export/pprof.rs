//! The pprof export: golden files as a decoded text dump (`results/<case>.pb.gz.txt`: the
//! sample types and one line per sample, its labels, its stack root first and its values),
//! decoded here from the gzipped protobuf with nothing of the exporter's code.

use std::collections::HashMap;
use std::io::Read;

use eltrace_export::{ExportOptions, Format};
use eltrace_trace::testing::traces::{basic, recursion, sampled, session, timeless};

use crate::support::{check_golden_file, run, run_session};

/// One protobuf field: a varint or length-delimited bytes.
#[derive(Debug, Clone)]
enum Field {
    Varint(u64),
    Bytes(Vec<u8>),
}

fn varint(buf: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = buf[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
    }
    panic!("overlong varint");
}

fn fields(buf: &[u8]) -> Vec<(u32, Field)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let key = varint(buf, &mut at);
        let (num, wire) = ((key >> 3) as u32, key & 7);
        match wire {
            0 => out.push((num, Field::Varint(varint(buf, &mut at)))),
            2 => {
                let n = varint(buf, &mut at) as usize;
                out.push((num, Field::Bytes(buf[at..at + n].to_vec())));
                at += n;
            }
            w => panic!("wire type {w} of field {num}"),
        }
    }
    out
}

fn uint(f: &[(u32, Field)], num: u32) -> u64 {
    f.iter()
        .find_map(|(n, v)| match v {
            Field::Varint(x) if *n == num => Some(*x),
            _ => None,
        })
        .unwrap_or(0)
}

/// A repeated varint field, packed or not.
fn uints(f: &[(u32, Field)], num: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for (n, v) in f {
        if *n != num {
            continue;
        }
        match v {
            Field::Varint(x) => out.push(*x),
            Field::Bytes(b) => {
                let mut at = 0;
                while at < b.len() {
                    out.push(varint(b, &mut at));
                }
            }
        }
    }
    out
}

fn messages(f: &[(u32, Field)], num: u32) -> Vec<Vec<(u32, Field)>> {
    f.iter()
        .filter_map(|(n, v)| match v {
            Field::Bytes(b) if *n == num => Some(fields(b)),
            _ => None,
        })
        .collect()
}

/// The profile as text: sample types, then the samples sorted.
fn dump(gz: &[u8]) -> String {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .expect("a gzip stream");
    let p = fields(&raw);
    let strings: Vec<String> = p
        .iter()
        .filter_map(|(n, v)| match v {
            Field::Bytes(b) if *n == 6 => Some(String::from_utf8(b.clone()).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(
        strings.first().map(String::as_str),
        Some(""),
        "string 0 is empty"
    );
    let s = |i: u64| strings[i as usize].clone();
    let functions: HashMap<u64, (String, String)> = messages(&p, 5)
        .iter()
        .map(|f| (uint(f, 1), (s(uint(f, 2)), s(uint(f, 4)))))
        .collect();
    let locations: HashMap<u64, u64> = messages(&p, 4)
        .iter()
        .map(|l| {
            let lines = messages(l, 4);
            assert_eq!(lines.len(), 1);
            (uint(l, 1), uint(&lines[0], 1))
        })
        .collect();
    let mut out = String::new();
    for t in messages(&p, 1) {
        out.push_str(&format!(
            "sample type {}/{}\n",
            s(uint(&t, 1)),
            s(uint(&t, 2))
        ));
    }
    let period = messages(&p, 11);
    out.push_str(&format!(
        "period type {}/{}\n",
        s(uint(&period[0], 1)),
        s(uint(&period[0], 2))
    ));
    let mut lines = Vec::new();
    for sample in messages(&p, 2) {
        let mut stack: Vec<String> = uints(&sample, 1)
            .iter()
            .map(|l| {
                let (name, module) = &functions[&locations[l]];
                format!("{name} [{module}]")
            })
            .collect();
        stack.reverse();
        let labels: Vec<String> = messages(&sample, 3)
            .iter()
            .map(|l| format!("{}={}", s(uint(l, 1)), s(uint(l, 2))))
            .collect();
        lines.push(format!(
            "{} | {} | {:?}",
            labels.join(" "),
            stack.join(";"),
            uints(&sample, 2)
        ));
    }
    lines.sort();
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[test]
fn golden_pprof() {
    for (case, trace) in [
        ("basic", basic()),
        ("recursion", recursion()),
        ("timeless", timeless()),
        ("sampled", sampled()),
    ] {
        let gz = run(Format::Pprof, &trace, &ExportOptions::default());
        check_golden_file(&format!("{case}.pb.gz.txt"), dump(&gz).as_bytes());
    }
}

#[test]
fn a_session_is_one_profile_with_a_label_per_process() {
    let gz = run_session(Format::Pprof, &session(), &ExportOptions::default());
    let text = dump(&gz);
    let processes: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split(" | ").next())
        .filter_map(|labels| labels.split(' ').find(|w| w.starts_with("process=")))
        .collect();
    assert_eq!(processes.len(), 2, "{text}");
}
