//! `record --values` (slow path) on a runtime-async program: values are sampled at the initial
//! Enter of each call and at its completion, never at a resume or a suspension.

use super::{W, assert_balanced, css, func};
use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app};
use crate::common::runtimes::Runtime;
use crate::runtimes;

runtimes!(values_at_initial_calls_and_completions);

/// `record --values` (slow path) on the runtime-async Work scenario: the report's value
/// samples hold the argument at each initial Enter and the completion value, and nothing from
/// a resume or a suspension, while every count stays exact.
fn values_at_initial_calls_and_completions(rt: Runtime) {
    let rec = record_app(
        Mode::Slow.on(rt),
        async_dll(),
        "work",
        &["--values"],
        &[("DOTNET_RuntimeAsync", "1")],
    );
    assert_eq!(
        rec.exit(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        rec.stdout,
        rec.stderr
    );
    let r = rec.report();
    assert_balanced(&r);
    assert_eq!(css(&r, &format!("{W}Work")), (5, 25, 20));
    let samples = |name: &str| -> Vec<(Option<String>, Option<String>)> {
        let f = func(&r, name);
        f["values"]
            .as_array()
            .unwrap_or_else(|| panic!("no values on {f}"))
            .iter()
            .map(|v| {
                (
                    v["args"].as_str().map(str::to_owned),
                    v["return"].as_str().map(str::to_owned),
                )
            })
            .collect()
    };
    let work = samples(&format!("{W}Work"));
    assert_eq!(
        work,
        vec![(Some("iterations=4".into()), Some("6".into())); 5],
        "Work's samples"
    );
    let void = samples(&format!("{W}WorkVoid"));
    assert_eq!(void, vec![(Some("iterations=2".into()), None); 2]);
    assert_eq!(
        samples(&format!("{W}WorkDouble")),
        vec![(Some("iterations=2".into()), Some("2".into())); 2]
    );
    assert_eq!(
        samples(&format!("{W}WorkFloat")),
        vec![(Some("iterations=2".into()), Some("2".into())); 2]
    );
}
