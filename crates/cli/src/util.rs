//! Shared helpers of the commands: the error type, opening a trace (with a progress line for
//! big files on a terminal), human-friendly units, word wrap, and writing to stdout without panicking.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use eltrace_analysis::{Analysis, AnalysisError};

/// A failed command: a one-line message and the exit code.
#[derive(Debug)]
pub struct Fail {
    pub code: u8,
    pub msg: String,
}

impl Fail {
    pub fn new(msg: impl Into<String>) -> Self {
        Fail {
            code: 1,
            msg: msg.into(),
        }
    }
    pub fn with_code(code: u8, msg: impl Into<String>) -> Self {
        Fail {
            code,
            msg: msg.into(),
        }
    }
}

/// Squeezes clap's multi-line error into one line: the message, the possible values if
/// listed, and a pointer to `--help`.
pub fn one_line_clap_error(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).skip_while(|l| l.is_empty());
    let first = lines.next().unwrap_or("invalid command line");
    let mut msg = first
        .strip_prefix("error:")
        .unwrap_or(first)
        .trim()
        .to_owned();
    if msg.ends_with(':') {
        // "The following required arguments were not provided:" and the list below it.
        let list: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
        msg.push(' ');
        msg.push_str(&list.join(", "));
    }
    if let Some(pv) = rendered
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("[possible values:"))
    {
        msg.push(' ');
        msg.push_str(pv);
    }
    msg.push_str(" (see 'eltrace --help')");
    msg
}

/// A duration in ns, in the largest unit that keeps it ≥ 1, with three significant digits.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 1_000 {
        return format!("{ns} ns");
    }
    let (v, unit) = if ns < 1_000_000 {
        (ns as f64 / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (ns as f64 / 1e6, "ms")
    } else {
        (ns as f64 / 1e9, "s")
    };
    if v < 10.0 {
        format!("{v:.2} {unit}")
    } else if v < 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// A byte count in B/KiB/MiB/GiB.
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Files above this size get a progress line (if stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 50 << 20;

/// Counts bytes read and shows a percentage on stderr now and then.
pub struct Progress<R> {
    inner: R,
    total: u64,
    done: u64,
    label: String,
    last: Option<Instant>,
    shown: bool,
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if let Some(last) = self.last {
            if last.elapsed() >= Duration::from_millis(200) {
                let pct = self.done.saturating_mul(100) / self.total.max(1);
                eprint!("\r{}: {pct:>3}%", self.label);
                self.shown = true;
                self.last = Some(Instant::now());
            }
        }
        Ok(n)
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

/// Opens a trace file for reading, with a clear message if it cannot be.
pub fn open_trace(path: &Path) -> Result<Progress<BufReader<File>>, Fail> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| Fail::new(format!("{shown}: {}", io_msg(&e))))?;
    if meta.is_dir() {
        return Err(Fail::new(format!(
            "{shown} is a directory, not a trace file"
        )));
    }
    let file = File::open(path).map_err(|e| Fail::new(format!("{shown}: {}", io_msg(&e))))?;
    let big = meta.len() > PROGRESS_MIN_BYTES && io::stderr().is_terminal();
    Ok(Progress {
        inner: BufReader::with_capacity(1 << 20, file),
        total: meta.len(),
        done: 0,
        label: format!("eltrace: reading {shown}"),
        last: big.then(Instant::now),
        shown: false,
    })
}

/// An I/O error without Rust's "(os error N)" suffix.
pub fn io_msg(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_owned(),
                None => s,
            }
        }
    }
}

/// The message for a failed analysis of `path`.
pub fn analysis_fail(path: &Path, e: &AnalysisError) -> Fail {
    Fail::new(format!("{}: {e}", path.display()))
}

/// Warns on stderr about what makes an analysis incomplete.
pub fn warn_incomplete(path: &Path, a: &Analysis) {
    if a.threads().next().is_none() && a.totals.events > 0 {
        eprintln!(
            "eltrace: warning: no thread of {} was selected (see `report` for the OS tids)",
            path.display()
        );
    }
    warn_truncated(path, a);
}

/// Warns on stderr when the trace was cut short.
pub fn warn_truncated(path: &Path, a: &Analysis) {
    if a.truncated {
        eprintln!(
            "eltrace: warning: {} is truncated (the recording was cut short); frames still \
             open run to the last timestamp",
            path.display()
        );
    }
}

/// Greedy word wrap to `width` columns (a longer word gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
pub fn print_stdout(text: &str) -> Result<(), Fail> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Fail::new(format!(
            "writing to stdout failed: {}",
            io_msg(&e)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(fmt_ns(0), "0 ns");
        assert_eq!(fmt_ns(999), "999 ns");
        assert_eq!(fmt_ns(1_234), "1.23 µs");
        assert_eq!(fmt_ns(12_345), "12.3 µs");
        assert_eq!(fmt_ns(123_456), "123 µs");
        assert_eq!(fmt_ns(1_500_000), "1.50 ms");
        assert_eq!(fmt_ns(2_000_000_000), "2.00 s");
        assert_eq!(fmt_ns(1_234_000_000_000), "1234 s");
        assert_eq!(fmt_bytes(100), "100 B");
        assert_eq!(fmt_bytes(3 << 20), "3.0 MiB");
    }

    #[test]
    fn clap_errors_become_one_line() {
        let e = "error: The following required arguments were not provided:\n  <FILE>\n\nUsage: eltrace report <FILE>\n";
        assert_eq!(
            one_line_clap_error(e),
            "The following required arguments were not provided: <FILE> (see 'eltrace --help')"
        );
        let e = "error: invalid value 'x' for '--by <BY>'\n  [possible values: inclusive, exclusive, calls]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line_clap_error(e),
            "invalid value 'x' for '--by <BY>' [possible values: inclusive, exclusive, calls] (see 'eltrace --help')"
        );
    }
}
