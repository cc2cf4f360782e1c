//! One line of the `check` table and what the checks build it from: the [`Verdict`], the
//! [`Row`], the helpers every check uses to fill one in, and the HRESULTs they name.

use crate::check::obs::Observations;

/// PASS: as documented. DIFFERS: a documented behaviour difference (e.g. a pre-fix runtime).
/// FAIL: neither. N/A: the check needs runtime async, which the runtime does not have
/// (.NET 8 and 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Differs,
    NotApplicable,
}

impl Verdict {
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Differs => "DIFFERS",
            Verdict::NotApplicable => "N/A",
        }
    }
}

/// One line of the `check` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: &'static str,
    pub expected: String,
    pub observed: String,
    pub verdict: Verdict,
}

pub const S_OK: u32 = 0;
pub const E_FAIL: u32 = 0x8000_4005;
pub const CORPROF_E_INCONSISTENT_WITH_FLAGS: u32 = 0x8013_1374;
pub const CORPROF_E_UNSUPPORTED_CALL_SEQUENCE: u32 = 0x8013_1363;

pub fn row(name: &'static str, expected: &str, observed: String, verdict: Verdict) -> Row {
    Row {
        name,
        expected: expected.to_string(),
        observed,
        verdict,
    }
}

pub fn pass_if(ok: bool) -> Verdict {
    if ok { Verdict::Pass } else { Verdict::Fail }
}

/// `0x80004005 (E_FAIL)` and friends.
pub fn hr_text(hr: Option<u32>) -> String {
    let Some(hr) = hr else { return "none".into() };
    let name = match hr {
        S_OK => "S_OK",
        E_FAIL => "E_FAIL",
        CORPROF_E_INCONSISTENT_WITH_FLAGS => "CORPROF_E_INCONSISTENT_WITH_FLAGS",
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE => "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE",
        0x8007_0057 => "E_INVALIDARG",
        0x8013_136F => "CORPROF_E_STACKSNAPSHOT_UNSAFE",
        0x8000_4001 => "E_NOTIMPL",
        _ => return format!("{hr:#010x}"),
    };
    if hr == S_OK {
        name.into()
    } else {
        format!("{name} ({hr:#010x})")
    }
}

/// A setup failure or crash before any observation, in words (for FAIL rows).
pub fn not_run(o: &Observations) -> Option<String> {
    if o.initialized() {
        None
    } else if let Some(e) = o.get("error") {
        Some(format!("experiment not set up: {e}; {}", o.exit_text()))
    } else {
        Some(format!(
            "experiment not set up (no `init` line); {}",
            o.exit_text()
        ))
    }
}
