//! The names the exports show: each process ([`ProcessMeta`], given to the exporter as the
//! process begins, so that one export can show several) and each thread (its name, or `main`
//! for the thread whose tid is the pid, and its tid so that pool threads read apart).

use eltrace_analysis::{Tables, ThreadIdx};
use eltrace_trace::TraceInfo;

/// The process an export shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessMeta {
    pub pid: u32,
    /// The short name viewers show: the program (`App.dll`), not the whole command line.
    pub name: String,
    /// The whole command line as recorded, empty when unknown.
    pub command: String,
    /// Where the process's time 0 (its trace's origin) lies on the export's timeline, in ns:
    /// 0 for a process shown alone; in a session, how much later than the earliest process
    /// it started ([`ProcessMeta::session`]).
    pub start_ns: u64,
}

impl ProcessMeta {
    /// The process of a trace's INFO record, at the start of the export's timeline.
    pub fn from_info(info: &TraceInfo) -> ProcessMeta {
        ProcessMeta {
            pid: info.pid,
            name: program_name(&info.command).unwrap_or_else(|| format!("pid {}", info.pid)),
            command: info.command.clone(),
            start_ns: 0,
        }
    }

    /// The processes of several traces on one timeline: each starts as much later than the
    /// earliest as its trace's wall-clock start says (`start_unix_ns`, taken with the trace's
    /// origin; a trace without one starts at 0). Different processes' ticks are not
    /// comparable (each converts its own clock), their wall clocks are.
    pub fn session<'a>(infos: impl IntoIterator<Item = &'a TraceInfo>) -> Vec<ProcessMeta> {
        let infos: Vec<&TraceInfo> = infos.into_iter().collect();
        let first = infos
            .iter()
            .map(|i| i.start_unix_ns)
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        infos
            .into_iter()
            .map(|info| ProcessMeta {
                start_ns: info.start_unix_ns.saturating_sub(first),
                ..ProcessMeta::from_info(info)
            })
            .collect()
    }

    /// How viewers without a process level name it: `App.dll (pid 4242)`.
    pub(crate) fn label(&self) -> String {
        format!("{} (pid {})", self.name, self.pid)
    }
}

/// The program of a command line: the first `*.dll`/`*.exe` argument of a `dotnet` host
/// (`dotnet exec --depsfile x.json /p/App.dll a` is `App.dll`), else the executable's file
/// name. `None` for an empty command line.
pub fn program_name(command: &str) -> Option<String> {
    let base = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or(s).to_owned();
    let mut words = command.split_whitespace();
    let exe = base(words.next()?);
    if exe == "dotnet" || exe == "dotnet.exe" {
        let lower = |w: &str| w.to_ascii_lowercase();
        if let Some(dll) = words.find(|w| lower(w).ends_with(".dll") || lower(w).ends_with(".exe"))
        {
            return Some(base(dll));
        }
    }
    Some(exe)
}

/// The tid a viewer gets for a thread: the OS tid when it fits a positive `i32` (Perfetto's
/// and the Trace Event Format's tids are 32-bit), else the thread's index.
pub(crate) fn display_tid(tables: &Tables, thread: ThreadIdx) -> u64 {
    match tables.threads.os_tid(thread) {
        Some(t) if t > 0 && t <= i32::MAX as u64 => t,
        _ => u64::from(thread.0),
    }
}

/// A thread's name ([`ThreadTable::name`](eltrace_analysis::ThreadTable::name)) with its
/// tid, for viewers that do not show tids and the HTML report's tables: `main (4242)`.
pub(crate) fn thread_label(tables: &Tables, thread: ThreadIdx, pid: u32) -> String {
    format!(
        "{} ({})",
        tables.threads.name(thread, pid),
        display_tid(tables, thread)
    )
}

#[cfg(test)]
mod tests {
    use super::{ProcessMeta, TraceInfo, program_name};

    #[test]
    fn a_session_shares_one_timeline() {
        let info = |pid, start_unix_ns| TraceInfo {
            pid,
            start_unix_ns,
            command: format!("dotnet P{pid}.dll"),
            ..TraceInfo::new(pid)
        };
        let got: Vec<(u32, String, u64)> =
            ProcessMeta::session(&[info(1, 5_000), info(2, 2_000), info(3, 0)])
                .into_iter()
                .map(|p| (p.pid, p.name, p.start_ns))
                .collect();
        assert_eq!(
            got,
            [
                (1, "P1.dll".into(), 3_000),
                (2, "P2.dll".into(), 0),
                (3, "P3.dll".into(), 0)
            ]
        );
    }

    #[test]
    fn program_names() {
        assert_eq!(program_name(""), None);
        assert_eq!(program_name("dotnet App.dll"), Some("App.dll".into()));
        assert_eq!(
            program_name("/usr/bin/dotnet exec --depsfile /a/x.json /a/b/App.DLL 1 2"),
            Some("App.DLL".into())
        );
        assert_eq!(
            program_name("/opt/app/Server --port 1"),
            Some("Server".into())
        );
        assert_eq!(program_name("dotnet run"), Some("dotnet".into()));
    }
}
