//! The oracle test in the suite (issue #13, item 4): tests/oracle/run.sh builds the oracle
//! tool and the corpus, instruments a copy of the corpus (a counter at the start of every
//! method body) and compares, per program and per mode (fast and slow path), every method's
//! `calls` in `eltrace report --json` of a plain run with the instrumented run's counts
//! (tests/oracle/README.md).
//!
//! One test per runtime (`runtimes!`: `…::net10`, `…::net11`, each built ignored, with the
//! reason, when `ELTRACE_TEST_RUNTIMES` leaves its runtime out). Every program of the corpus
//! must be exact in both modes on .NET 10, the `runtime-async` and `runtime-async-shapes`
//! programs (the `async` and `async-shapes` programs compiled with runtime async) and the
//! library corpus's `pipes` and `async-linq` (System.IO.Pipelines and
//! System.Linq.AsyncEnumerable from NuGet, instrumented too) included; the async programs and
//! the library corpus also on .NET 11.0.0. A failed instrumented run, a failed `eltrace`, or a
//! dropped event fails the test as well.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::processes::{ChildGuard, TempDir, eltrace, profiler_library, repo_root};
use crate::common::runtimes::Runtime;
use crate::runtimes;

/// The corpus's programs (tests/oracle/Corpus/Program.cs, `runtime-async` and
/// `runtime-async-shapes`, and the library corpus's); each must be exact.
const PROGRAMS: &[&str] = &[
    "recursion",
    "json",
    "interp",
    "iterators",
    "generics",
    "threads",
    "lambdas",
    "async",
    "tailrec",
    "async-shapes",
    "runtime-async",
    "runtime-async-shapes",
    "pipes",
    "async-linq",
];

/// The programs that also run on .NET 11.0.0: the async programs (CoreLib's own async code is
/// runtime-async there; the runtime-async builds as written), and the library corpus (the
/// packages' net11.0 builds: System.IO.Pipelines read by CoreLib's runtime-async StreamReader
/// through Stream overrides; System.Linq.AsyncEnumerable's operators over our async iterator).
const ON_NET11: &[&str] = &[
    "async",
    "runtime-async",
    "async-shapes",
    "runtime-async-shapes",
    "pipes",
    "async-linq",
];

const MODES: &[&str] = &["fast", "slow"];

/// The build (the tool and two compilations of the corpus, Mono.Cecil restored from NuGet)
/// and 2 × 14 recordings, on a loaded machine (per runtime).
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

/// Runs tests/oracle/run.sh for `programs` (all when empty) on `runtime` in the fast and slow
/// path, in a directory of its own; returns its outcomes and the run's output (for messages).
fn run_oracle(
    dir: &TempDir,
    runtime: Runtime,
    programs: &[&str],
) -> (BTreeMap<(String, String), Outcome>, String) {
    let base = dir.path().join(format!("net{}", runtime.major()));
    fs::create_dir_all(&base).expect("output directory");
    let out = base.join("run.stdout");
    let err = base.join("run.stderr");
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("tests/oracle/run.sh"))
        .args(programs)
        .env("ELTRACE", eltrace())
        .env("ORACLE_OUT", base.join("out"))
        .env("ORACLE_MODES", MODES.join(" "))
        .env("ORACLE_RUNTIME", runtime.major().to_string())
        .env_remove("ELTRACE_HOOKS")
        .env_remove("ELTRACE_BUFFER_EVENTS")
        .env_remove("ELTRACE_LOSSY")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .current_dir(&base)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("stdout file"))
        .stderr(fs::File::create(&err).expect("stderr file"));
    let status = ChildGuard::spawn(&mut cmd).wait(TIMEOUT, "tests/oracle/run.sh");
    let stdout = fs::read_to_string(&out).unwrap_or_default();
    let stderr = fs::read_to_string(&err).unwrap_or_default();
    let context = format!("run.sh on {runtime} ({status}) stdout:\n{stdout}\nstderr:\n{stderr}");
    (parse(&stdout), context)
}

/// Every one of `programs` ran in both modes and matched exactly; nothing else failed.
fn assert_exact(results: &BTreeMap<(String, String), Outcome>, programs: &[&str], context: &str) {
    let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
    for program in programs {
        for mode in MODES {
            expected.insert((program.to_string(), mode.to_string()));
        }
    }
    let missing: Vec<_> = expected
        .iter()
        .filter(|k| !results.contains_key(*k))
        .collect();
    assert!(missing.is_empty(), "no result for {missing:?}; {context}");
    for ((program, mode), o) in results {
        assert!(
            o.ok,
            "{program} {mode} is not exact:\n{}\n\n{context}",
            o.text
        );
    }
    assert_eq!(results.len(), expected.len(), "{context}");
}

runtimes!(oracle_corpus_counts_match_in_fast_and_slow_mode);

/// The corpus on `runtime`: on .NET 10 every program (run.sh's own list, which must be
/// [`PROGRAMS`]), on .NET 11.0.0 those of [`ON_NET11`].
fn oracle_corpus_counts_match_in_fast_and_slow_mode(runtime: Runtime) {
    profiler_library();
    let dir = TempDir::new("oracle");
    let (expected, asked) = match runtime {
        Runtime::Net10 => (PROGRAMS, &[][..]),
        Runtime::Net11 => (ON_NET11, ON_NET11),
    };
    let (results, context) = run_oracle(&dir, runtime, asked);
    assert_exact(&results, expected, &context);
    eprintln!("oracle: {} comparisons exact on {runtime}", results.len());
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
        assert!(!get("threads", "*").ok);
        assert!(!get("json", "slow").ok);
        assert_eq!(r.len(), 4);
    }
}
