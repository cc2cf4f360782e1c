//! Observations: the `key value` lines an experiment left (the check-mode profiler's file,
//! the probe program's `probe KEY VALUE` stdout lines as `probe.KEY`, and the child's exit as
//! `exit.*`), with typed accessors. Event lines (`event kind=… tid=… fid=… … name=…`) parse
//! into [`Event`]s.

use std::collections::BTreeMap;

/// Everything one experiment produced, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    pub lines: Vec<(String, String)>,
}

/// One Enter/Leave/Tailcall seen by a hook.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: String,
    pub tid: u64,
    pub fid: u64,
    pub name: String,
    pub fields: BTreeMap<String, String>,
}

impl Event {
    pub fn field(&self, k: &str) -> Option<&str> {
        self.fields.get(k).map(String::as_str)
    }
    pub fn hr(&self) -> Option<u32> {
        self.field("hr").and_then(parse_u32)
    }
    pub fn num(&self, k: &str) -> Option<u64> {
        self.field(k).and_then(parse_u64)
    }
}

/// A number written as decimal or `0x` hex.
pub fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

pub fn parse_u32(s: &str) -> Option<u32> {
    parse_u64(s).and_then(|v| u32::try_from(v).ok())
}

/// `k=v k=v … name=rest of line`: the fields of an event or similar line (`name` may not
/// contain `=`-separated parts, it runs to the end).
pub fn fields(value: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        if let Some(name) = rest.strip_prefix("name=") {
            out.insert("name".into(), name.to_string());
            break;
        }
        let (item, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Some((k, v)) = item.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        }
        rest = tail.trim_start();
    }
    out
}

impl Observations {
    /// Parses `key value` lines (blank lines are skipped; a line without a space is a key
    /// with an empty value).
    pub fn parse(text: &str) -> Observations {
        let mut o = Observations::default();
        for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
            let (k, v) = line.split_once(' ').unwrap_or((line, ""));
            o.push(k, v);
        }
        o
    }

    /// Adds the probe program's `probe KEY VALUE` stdout lines as `probe.KEY VALUE`.
    pub fn add_probe_stdout(&mut self, stdout: &str) {
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("probe ") {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                self.push(&format!("probe.{k}"), v.trim());
            }
        }
    }

    /// The lines again, as [`Observations::parse`] reads them.
    pub fn to_text(&self) -> String {
        self.lines
            .iter()
            .map(|(k, v)| format!("{k} {v}\n"))
            .collect()
    }

    pub fn push(&mut self, key: &str, value: &str) {
        self.lines.push((key.to_string(), value.to_string()));
    }

    /// The last value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.lines
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn num(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(parse_u64)
    }

    pub fn hr(&self, key: &str) -> Option<u32> {
        self.get(key).and_then(parse_u32)
    }

    /// The event lines, in order.
    pub fn events(&self) -> Vec<Event> {
        self.all("event")
            .filter_map(|v| {
                let mut f = fields(v);
                Some(Event {
                    kind: f.remove("kind")?,
                    tid: f.remove("tid").and_then(|s| parse_u64(&s))?,
                    fid: f.remove("fid").and_then(|s| parse_u64(&s))?,
                    name: f.remove("name").unwrap_or_default(),
                    fields: f,
                })
            })
            .collect()
    }

    /// How the child ended, in words.
    pub fn exit_text(&self) -> String {
        if self.get("exit.timeout").is_some() {
            return "timed out (killed)".into();
        }
        if let Some(sig) = self.num("exit.signal") {
            return format!("killed by signal {sig}{}", signal_name(sig));
        }
        match self.num("exit.code") {
            Some(0) => "exit 0".into(),
            Some(3) => "exit 3 (wrong results)".into(),
            Some(c) => format!("exit {c}"),
            None => "did not run".into(),
        }
    }

    /// The child exited 0 and the probe said every result was right.
    pub fn program_ok(&self) -> bool {
        self.num("exit.code") == Some(0) && self.num("probe.ok") == Some(1)
    }

    /// The profiler set its experiment up (`init 0x00000000`).
    pub fn initialized(&self) -> bool {
        self.hr("init") == Some(0)
    }
}

fn signal_name(sig: u64) -> &'static str {
    match sig {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fields_and_events_parse() {
        let mut o = Observations::parse(
            "init 0x00000000\nevent kind=enter tid=7 fid=0x10 hr=0x0 len0=4 name=A.B.C\n\nx\n",
        );
        o.add_probe_stdout("hello\nprobe ok 1\nprobe a.b 2.5\n");
        assert!(o.initialized());
        assert_eq!(o.get("x"), Some(""));
        assert_eq!(o.num("probe.ok"), Some(1));
        assert_eq!(o.get("probe.a.b"), Some("2.5"));
        let ev = o.events();
        assert_eq!(ev.len(), 1);
        assert_eq!(
            (ev[0].kind.as_str(), ev[0].tid, ev[0].fid),
            ("enter", 7, 0x10)
        );
        assert_eq!(ev[0].name, "A.B.C");
        assert_eq!(ev[0].num("len0"), Some(4));
        assert_eq!(ev[0].hr(), Some(0));
    }

    #[test]
    fn exit_texts() {
        let mut o = Observations::default();
        assert_eq!(o.exit_text(), "did not run");
        o.push("exit.signal", "6");
        assert_eq!(o.exit_text(), "killed by signal 6 (SIGABRT)");
        assert!(!o.program_ok());
    }
}
