//! The checks of the JIT under eltrace's own event mask (jit.*): inlining into a probed
//! method, tiering, and ReadyToRun code (docs/abi.md "Inlining, tiering and ReadyToRun with
//! ELT"); each a pure function from the `jit` experiment's observations (the probe
//! check/probes/JitProbe.cs, the profiler's crates/profiler/src/check/jit.rs) to a [`Row`].

use std::collections::BTreeMap;

use super::row::*;
use crate::check::obs::Observations;

const PROBE: &str = "Probes.JitProbe.";

/// The `jit` experiment's observations, by function.
struct Jit {
    /// JIT compilations per function (`jit` lines).
    compiled: BTreeMap<String, u64>,
    /// `JITInlining` questions: (caller, callee, allowed).
    inline: Vec<(String, String, bool)>,
    /// Enters per function, summed over its client ids (one per compilation).
    enters: BTreeMap<String, u64>,
    /// Mapper calls per function (`map` lines).
    mapped: BTreeMap<String, u64>,
}

impl Jit {
    fn of(o: &Observations) -> Jit {
        let mut j = Jit {
            compiled: BTreeMap::new(),
            inline: Vec::new(),
            enters: BTreeMap::new(),
            mapped: BTreeMap::new(),
        };
        let name = |v: &str| {
            crate::check::obs::fields(v)
                .remove("name")
                .unwrap_or_default()
        };
        for (k, v) in &o.lines {
            match k.as_str() {
                "jit" => *j.compiled.entry(name(v)).or_default() += 1,
                "map" => *j.mapped.entry(name(v)).or_default() += 1,
                "inline" => {
                    let f = crate::check::obs::fields(v);
                    let get = |k: &str| f.get(k).cloned().unwrap_or_default();
                    j.inline
                        .push((get("caller"), get("name"), get("allow") == "1"));
                }
                "enters" => {
                    let f = crate::check::obs::fields(v);
                    let n = f.get("count").and_then(|c| c.parse().ok()).unwrap_or(0);
                    *j.enters.entry(name(v)).or_default() += n;
                }
                _ => {}
            }
        }
        j
    }

    fn compiled(&self, name: &str) -> u64 {
        self.compiled.get(name).copied().unwrap_or(0)
    }

    fn enters(&self, name: &str) -> u64 {
        self.enters.get(name).copied().unwrap_or(0)
    }

    /// The answers to `JITInlining(caller, callee)`: (allowed, refused).
    fn answers(&self, caller: &str, callee: &str) -> (u64, u64) {
        let asked = self
            .inline
            .iter()
            .filter(|(c, e, _)| c == caller && e == callee);
        asked.fold(
            (0, 0),
            |(y, n), (.., allow)| {
                if *allow { (y + 1, n) } else { (y, n + 1) }
            },
        )
    }
}

/// "asked 1×: allowed" and the like.
fn answer_text(allowed: u64, refused: u64) -> String {
    match (allowed, refused) {
        (0, 0) => "never asked".into(),
        (a, 0) => format!("asked {a}×: allowed"),
        (0, r) => format!("asked {r}×: refused"),
        (a, r) => format!("asked {}×: allowed {a}, refused {r}", a + r),
    }
}

/// The experiment's FAIL row when it did not run.
fn not_run_row(name: &'static str, expected: &str, o: &Observations) -> Option<Row> {
    let why = not_run(o)
        .or_else(|| (!o.program_ok()).then(|| format!("probe failed: {}", o.exit_text())))?;
    Some(row(name, expected, why, Verdict::Fail))
}

pub(super) fn jit_inline_unselected(o: &Observations) -> Row {
    const NAME: &str = "jit.inline-unselected";
    const EXP: &str = "JITInlining(Caller, Small) asked and allowed (Small is not selected): \
                       Small is inlined into the probed Caller, never compiled on its own";
    if let Some(r) = not_run_row(NAME, EXP, o) {
        return r;
    }
    let j = Jit::of(o);
    let (caller, small) = (format!("{PROBE}Caller"), format!("{PROBE}Small"));
    let (allowed, refused) = j.answers(&caller, &small);
    let compiled = j.compiled(&small);
    let observed = format!(
        "{}; Small compiled {compiled}×; {} Enter(s) of Caller",
        answer_text(allowed, refused),
        j.enters(&caller)
    );
    let ok = allowed > 0 && refused == 0 && compiled == 0;
    row(NAME, EXP, observed, pass_if(ok))
}

pub(super) fn jit_inline_selected(o: &Observations) -> Row {
    const NAME: &str = "jit.inline-selected";
    const EXP: &str = "JITInlining(Caller, Selected) asked and refused (Selected is selected): \
                       Selected keeps its probes, one Enter per call";
    if let Some(r) = not_run_row(NAME, EXP, o) {
        return r;
    }
    let j = Jit::of(o);
    let (caller, selected) = (format!("{PROBE}Caller"), format!("{PROBE}Selected"));
    let (allowed, refused) = j.answers(&caller, &selected);
    let calls = o.num("probe.jit.inline_calls").unwrap_or(0);
    let enters = j.enters(&selected);
    let observed = format!(
        "{}; Selected compiled {}×, {enters} Enters for {calls} calls",
        answer_text(allowed, refused),
        j.compiled(&selected)
    );
    let ok = refused > 0 && allowed == 0 && calls > 0 && enters == calls;
    row(NAME, EXP, observed, pass_if(ok))
}

pub(super) fn jit_tiering(o: &Observations) -> Row {
    const NAME: &str = "jit.tiering";
    const EXP: &str = "tiering stays on: hot methods, probed (HotProbed) or not (HotPlain), are \
                       compiled more than once (tier 0, instrumented tier 0, tier 1), only the \
                       last optimized (asks to inline Leaf); every call of HotProbed is an Enter";
    if let Some(r) = not_run_row(NAME, EXP, o) {
        return r;
    }
    let j = Jit::of(o);
    let leaf = format!("{PROBE}Leaf");
    let calls = o.num("probe.jit.hot_calls").unwrap_or(0);
    let mut parts = Vec::new();
    let (mut tiered, mut once_optimized) = (true, true);
    for m in ["HotProbed", "HotPlain"] {
        let name = format!("{PROBE}{m}");
        let n = j.compiled(&name);
        let (a, r) = j.answers(&name, &leaf);
        tiered &= n >= 2 && a + r <= 1;
        once_optimized &= n == 1 && a + r == 1;
        parts.push(format!(
            "{m} compiled {n}×, {} asking to inline Leaf",
            a + r
        ));
    }
    let probed = format!("{PROBE}HotProbed");
    let enters = j.enters(&probed);
    let mapped = j.mapped.get(&probed).copied().unwrap_or(0);
    let observed = format!(
        "{}; HotProbed: mapper asked {mapped}×, {enters} Enters for {calls} calls",
        parts.join(", ")
    );
    let counted = calls > 0 && enters == calls;
    let verdict = if tiered && counted {
        Verdict::Pass
    } else if once_optimized && counted {
        // Tiering off under the profiler: a difference to document, not a fault.
        Verdict::Differs
    } else {
        Verdict::Fail
    };
    row(NAME, EXP, observed, verdict)
}

pub(super) fn jit_r2r_unselected(o: &Observations) -> Row {
    const NAME: &str = "jit.r2r-unselected";
    const EXP: &str = "ReadyToRun code refused (ENTERLEAVE is in COR_PRF_REQUIRE_PROFILE_IMAGE): \
                       CoreLib's Convert.ToBase64String, not selected, is JIT-compiled";
    if let Some(r) = not_run_row(NAME, EXP, o) {
        return r;
    }
    let j = Jit::of(o);
    let n = j.compiled("System.Convert.ToBase64String");
    let (all, framework) = (
        o.num("jit.compilations").unwrap_or(0),
        o.num("jit.framework_compilations").unwrap_or(0),
    );
    let observed = format!(
        "ToBase64String: {n} compilation(s), overloads included; {framework} of the run's {all} JIT compilations were \
         framework methods"
    );
    // R2R code used for unselected methods would be the faster runtime: a difference.
    let verdict = if n > 0 {
        Verdict::Pass
    } else {
        Verdict::Differs
    };
    row(NAME, EXP, observed, verdict)
}

pub(super) fn jit_r2r_selected(o: &Observations) -> Row {
    const NAME: &str = "jit.r2r-selected";
    const EXP: &str = "CoreLib's Convert.FromBase64String, selected, is JIT-compiled with \
                       probes: one Enter per call";
    if let Some(r) = not_run_row(NAME, EXP, o) {
        return r;
    }
    let j = Jit::of(o);
    let name = "System.Convert.FromBase64String";
    let calls = o.num("probe.jit.r2r_calls").unwrap_or(0);
    let enters = j.enters(name);
    let observed = format!(
        "compiled {}×, {enters} Enters for {calls} calls",
        j.compiled(name)
    );
    row(
        NAME,
        EXP,
        observed,
        pass_if(calls > 0 && j.compiled(name) > 0 && enters == calls),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Observations {
        Observations::parse(include_str!("../fixtures/jit.obs"))
    }

    /// Drops the lines of `key` whose value contains `part` (at least one).
    fn drop_lines(o: &mut Observations, key: &str, part: &str) {
        let before = o.lines.len();
        o.lines.retain(|(k, v)| !(k == key && v.contains(part)));
        assert!(o.lines.len() < before, "no {key} line with {part:?}");
    }

    /// Replaces the value of the first line of `key` that contains `part`.
    fn replace(o: &mut Observations, key: &str, part: &str, value: &str) {
        let line = o
            .lines
            .iter_mut()
            .find(|(k, v)| k == key && v.contains(part));
        line.expect("line exists").1 = value.to_string();
    }

    fn verdict(f: fn(&Observations) -> Row, o: &Observations) -> Verdict {
        f(o).verdict
    }

    #[test]
    fn the_fixture_passes_every_jit_check() {
        let o = fixture();
        for f in [
            jit_inline_unselected,
            jit_inline_selected,
            jit_tiering,
            jit_r2r_unselected,
            jit_r2r_selected,
        ] {
            let r = f(&o);
            assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
        }
    }

    #[test]
    fn inlining_rows_fail_when_the_runtime_does_otherwise() {
        let mut o = fixture();
        drop_lines(&mut o, "inline", "name=Probes.JitProbe.Small");
        assert_eq!(verdict(jit_inline_unselected, &o), Verdict::Fail);
        let mut o = fixture();
        o.push("jit", "fid=0x1 name=Probes.JitProbe.Small");
        assert_eq!(verdict(jit_inline_unselected, &o), Verdict::Fail);
        let mut o = fixture();
        replace(
            &mut o,
            "inline",
            "name=Probes.JitProbe.Selected",
            "caller=Probes.JitProbe.Caller allow=1 name=Probes.JitProbe.Selected",
        );
        assert_eq!(verdict(jit_inline_selected, &o), Verdict::Fail);
        let mut o = fixture();
        replace(
            &mut o,
            "enters",
            "name=Probes.JitProbe.Selected",
            "count=0 name=Probes.JitProbe.Selected",
        );
        assert_eq!(verdict(jit_inline_selected, &o), Verdict::Fail);
    }

    #[test]
    fn tiering_off_differs_and_lost_enters_fail() {
        // One optimized compilation each: what DOTNET_TieredCompilation=0 would give.
        let mut o = fixture();
        for m in ["HotProbed", "HotPlain"] {
            drop_lines(&mut o, "jit", &format!("name=Probes.JitProbe.{m}"));
            o.push("jit", &format!("fid=0x1 name=Probes.JitProbe.{m}"));
        }
        assert_eq!(verdict(jit_tiering, &o), Verdict::Differs);
        drop_lines(&mut o, "inline", "caller=Probes.JitProbe.HotPlain");
        assert_eq!(verdict(jit_tiering, &o), Verdict::Fail);
        let mut o = fixture();
        replace(
            &mut o,
            "enters",
            "name=Probes.JitProbe.HotProbed",
            "count=1 name=Probes.JitProbe.HotProbed",
        );
        assert_eq!(verdict(jit_tiering, &o), Verdict::Fail);
    }

    #[test]
    fn ready_to_run_code_used_differs_or_fails() {
        let mut o = fixture();
        drop_lines(&mut o, "jit", "name=System.Convert.ToBase64String");
        assert_eq!(verdict(jit_r2r_unselected, &o), Verdict::Differs);
        drop_lines(&mut o, "jit", "name=System.Convert.FromBase64String");
        replace(
            &mut o,
            "enters",
            "name=System.Convert.FromBase64String",
            "count=0 name=System.Convert.FromBase64String",
        );
        assert_eq!(verdict(jit_r2r_selected, &o), Verdict::Fail);
    }

    #[test]
    fn a_failed_probe_fails_every_jit_check() {
        let mut o = fixture();
        replace(&mut o, "exit.code", "0", "3");
        for f in [jit_inline_unselected, jit_tiering, jit_r2r_unselected] {
            assert_eq!(verdict(f, &o), Verdict::Fail);
        }
    }
}
