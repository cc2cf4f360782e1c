//! The oracle test in the suite (issue #13, item 4): tests/oracle/run.sh builds the oracle
//! tool and the corpus, instruments a copy of the corpus (a counter at the start of every
//! method body) and compares, per program and per mode (fast and slow path), every method's
//! `calls` in `eltrace report --json` of a plain run with the instrumented run's counts
//! (tests/oracle/README.md).
//!
//! Every classic program of the corpus must be exact in both modes. The `runtime-async`
//! program (the `async` program compiled with runtime async) runs too, but its counts are
//! allowed to differ while eltrace's runtime-async linking is not exact (the README's "Known
//! mismatches"): a mismatch there is printed, not failed. It must still run: a failed
//! instrumented run, a failed `eltrace`, or a dropped event fails the test in every program.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::processes::{ChildGuard, TempDir, eltrace, profiler_library, repo_root};

/// The corpus's classic programs (tests/oracle/Corpus/Program.cs); each must be exact.
const CLASSIC: &[&str] = &[
    "recursion",
    "json",
    "interp",
    "iterators",
    "generics",
    "threads",
    "lambdas",
    "async",
    "tailrec",
];

/// The program whose counts may differ for now (runtime-async linking, issue #13 item 3).
const ALLOWED_TO_DIFFER: &str = "runtime-async";

const MODES: &[&str] = &["fast", "slow"];

/// The build (the tool and two compilations of the corpus, Mono.Cecil restored from NuGet)
/// and 2 × 10 recordings, on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(900);

/// One program's result in one mode, as run.sh printed it.
#[derive(Debug)]
struct Outcome {
    ok: bool,
    /// The line itself and the comparison's lines under it (mismatches, the summary).
    text: String,
}

/// Parses run.sh's `ok   P MODE: …` and `FAIL P MODE` (with indented details) lines, and
/// `FAIL P: the instrumented run failed` (recorded under mode `*`).
fn parse(stdout: &str) -> BTreeMap<(String, String), Outcome> {
    let mut results: BTreeMap<(String, String), Outcome> = BTreeMap::new();
    let mut last: Option<(String, String)> = None;
    for line in stdout.lines() {
        if let Some(detail) = line.strip_prefix("    ") {
            if let Some(o) = last.as_ref().and_then(|k| results.get_mut(k)) {
                o.text.push('\n');
                o.text.push_str(detail);
            }
            continue;
        }
        let (ok, rest) = if let Some(rest) = line.strip_prefix("ok   ") {
            (true, rest)
        } else if let Some(rest) = line.strip_prefix("FAIL ") {
            (false, rest)
        } else {
            last = None;
            continue;
        };
        let head = rest.split(':').next().unwrap_or(rest);
        let mut words = head.split_whitespace();
        let program = words.next().unwrap_or("").to_string();
        let mode = words.next().unwrap_or("*").to_string();
        let key = (program, mode);
        results.insert(
            key.clone(),
            Outcome {
                ok,
                text: line.to_string(),
            },
        );
        last = Some(key);
    }
    results
}

/// Whether a failed comparison only says that counts differ: every detail line a mismatch
/// or the comparison's summary with no dropped event (not an invalid run, not a failure to
/// record or report).
fn only_count_mismatches(o: &Outcome) -> bool {
    let mut details = o.text.lines().skip(1).peekable();
    details.peek().is_some()
        && details.all(|l| {
            l.starts_with("MISMATCH\t")
                || (l.starts_with("oracle: ") && l.ends_with(", dropped events 0"))
        })
}

#[test]
fn oracle_corpus_counts_match_in_fast_and_slow_mode() {
    profiler_library();
    let dir = TempDir::new("oracle");
    let out = dir.path().join("run.stdout");
    let err = dir.path().join("run.stderr");
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("tests/oracle/run.sh"))
        .env("ELTRACE", eltrace())
        .env("ORACLE_OUT", dir.path().join("out"))
        .env("ORACLE_MODES", MODES.join(" "))
        .env_remove("ELTRACE_HOOKS")
        .env_remove("ELTRACE_BUFFER_EVENTS")
        .env_remove("ELTRACE_LOSSY")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("stdout file"))
        .stderr(fs::File::create(&err).expect("stderr file"));
    let status = ChildGuard::spawn(&mut cmd).wait(TIMEOUT, "tests/oracle/run.sh");
    let stdout = fs::read_to_string(&out).unwrap_or_default();
    let stderr = fs::read_to_string(&err).unwrap_or_default();
    let results = parse(&stdout);
    let context = format!("run.sh ({status}) stdout:\n{stdout}\nstderr:\n{stderr}");

    // Every classic program ran in both modes and matched exactly; nothing else failed.
    let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
    for program in CLASSIC.iter().chain([&ALLOWED_TO_DIFFER]) {
        for mode in MODES {
            expected.insert((program.to_string(), mode.to_string()));
        }
    }
    let missing: Vec<_> = expected
        .iter()
        .filter(|k| !results.contains_key(*k))
        .collect();
    assert!(missing.is_empty(), "no result for {missing:?}; {context}");
    let mut allowed = Vec::new();
    for ((program, mode), o) in &results {
        if o.ok {
            continue;
        }
        if program == ALLOWED_TO_DIFFER && only_count_mismatches(o) {
            allowed.push(format!("{program} {mode}:\n{}", o.text));
            continue;
        }
        panic!("{program} {mode} is not exact:\n{}\n\n{context}", o.text);
    }
    let exact = results.values().filter(|o| o.ok).count();
    assert!(
        exact >= CLASSIC.len() * MODES.len(),
        "exact comparisons: {exact}; {context}"
    );
    // Visible with --nocapture (and in a failure's output): what differed but is allowed.
    if allowed.is_empty() {
        eprintln!("oracle: {exact} comparisons exact, {ALLOWED_TO_DIFFER} included");
    } else {
        eprintln!(
            "oracle: {exact} comparisons exact; ALLOWED TO DIFFER (runtime-async linking is not \
             exact yet, tests/oracle/README.md \"Known mismatches\"):\n{}",
            allowed.join("\n")
        );
    }
}

mod parsing {
    use super::*;

    #[test]
    fn run_sh_lines_are_parsed_with_their_details() {
        let r = parse(
            "==> oracle: building\n\
             ok   json fast: oracle: 47 functions, eltrace: 47 in Corpus.dll, 0 mismatched, dropped events 0\n\
             FAIL runtime-async slow\n    \
             MISMATCH\tCorpus.AsyncProgram.Chain\toracle: calls 6 frames 6 (method)\teltrace: calls 8 segments 17\n    \
             oracle: 35 functions, eltrace: 35 in CorpusRA.dll, 1 mismatched, dropped events 0\n\
             FAIL threads: the instrumented run failed\n\
             FAIL json slow\n    \
             oracle: 47 functions, eltrace: 47 in Corpus.dll, 0 mismatched, dropped events 12\n    \
             INVALID\tthe trace dropped events: its counts prove nothing\n\
             oracle: 1 passed, 3 failed\n",
        );
        let get = |p: &str, m: &str| &r[&(p.to_string(), m.to_string())];
        assert!(get("json", "fast").ok);
        assert!(!get("runtime-async", "slow").ok);
        assert!(only_count_mismatches(get("runtime-async", "slow")));
        assert!(!get("threads", "*").ok);
        assert!(!only_count_mismatches(get("threads", "*")));
        assert!(!only_count_mismatches(get("json", "slow")));
        assert_eq!(r.len(), 4);
    }
}
