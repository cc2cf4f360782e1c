//! Invariants that hold on any trace, checked on random ones (nested, recursive, messy).

use eltrace_trace::EventKind::{Enter, Leave, Tailcall, Throw, Unwind};
use eltrace_trace::ThreadIdx;

use super::build::*;
use crate::*;

/// Frames checked against the invariants as they close.
#[derive(Default)]
struct Check {
    frames: u64,
}

impl FrameSink for Check {
    fn frame(&mut self, _: &Tables, _: ThreadIdx, f: &Frame) -> std::io::Result<()> {
        assert!(f.end_ns >= f.start_ns);
        assert!(f.children_ns <= f.duration_ns(), "{f:?}");
        assert_eq!(f.depth == 0, f.parent.is_none());
        self.frames += 1;
        Ok(())
    }
}

fn random_trace(seed: u64, recursive: bool, messy: bool) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let nf = 12u32;
    let names: Vec<String> = (0..nf).map(|i| format!("F{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut b = b(&names);
    for t in 0..4 {
        b = b.thread(t, 100 + u64::from(t));
    }
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); 4];
    let mut ts = [0u64; 4];
    for _ in 0..400 {
        let t = rng.next(4) as usize;
        let mut evs = Vec::new();
        for _ in 0..rng.next(20) + 1 {
            ts[t] += rng.next(50);
            let st = &mut stacks[t];
            let r = rng.next(10);
            if r < 5 && st.len() < 30 {
                // Without recursion, callees have higher indices than callers.
                let lo = if recursive {
                    0
                } else {
                    st.last().map_or(0, |f| f + 1)
                };
                if lo < nf {
                    let f = lo + rng.next(u64::from(nf - lo)) as u32;
                    st.push(f);
                    evs.push((ts[t], Enter, f));
                }
            } else if let Some(&f) = st.last() {
                let kind = match (messy, rng.next(12)) {
                    (true, 0) => Unwind,
                    (true, 1) => Tailcall,
                    (true, 2) if st.len() > 2 => {
                        // Leave of a lower frame: the ones above are mismatched.
                        let i = rng.next(st.len() as u64) as usize;
                        let g = st[i];
                        let pos = st.iter().position(|&x| x == g).unwrap_or(i);
                        st.truncate(pos);
                        evs.push((ts[t], Leave, g));
                        continue;
                    }
                    (true, 3) => {
                        evs.push((ts[t], Leave, nf + 1));
                        continue;
                    }
                    (true, 4) => {
                        evs.push((ts[t], Throw, f));
                        continue;
                    }
                    _ => Leave,
                };
                st.pop();
                evs.push((ts[t], kind, f));
            }
        }
        if !evs.is_empty() {
            b = b.events(t as u32, &evs);
        }
        if messy && rng.next(40) == 0 {
            b = b.dropped(t as u32, 5);
            stacks[t].clear();
        }
    }
    b.end(0)
}

#[test]
fn invariants_hold_on_random_traces() {
    for seed in 1..40u64 {
        for (recursive, messy) in [(false, false), (true, false), (true, true), (false, true)] {
            let bytes = random_trace(seed, recursive, messy);
            let mut check = Check::default();
            let opts = Options {
                call_tree: true,
                ..Options::default()
            };
            let a = analyze_with(&bytes[..], &opts, &mut check).unwrap();
            assert_eq!(check.frames, a.totals.frames);
            let mut excl_sum = 0;
            let mut calls = 0;
            for (_, s) in a.functions() {
                assert!(s.exclusive_ns <= s.inclusive_ns, "seed {seed}: {s:?}");
                assert!(s.max_ns <= s.inclusive_ns);
                excl_sum += s.exclusive_ns;
                calls += s.calls;
            }
            assert_eq!(calls, a.totals.frames);
            // Exclusive times partition the root frames' time.
            assert_eq!(excl_sum, a.totals.root_ns, "seed {seed}");
            let thread_sum: u64 = a.threads().map(|(_, t)| t.inclusive_ns).sum();
            assert_eq!(thread_sum, a.totals.root_ns);
            // Edge calls add up to function calls.
            let edges = a.edges();
            for (f, s) in a.functions() {
                let into: u64 = edges.iter().filter(|e| e.1 == f).map(|e| e.2.calls).sum();
                assert_eq!(into, s.calls);
            }
            if !recursive {
                // A caller's inclusive time covers the time of all its callees.
                for (f, s) in a.functions() {
                    let out: u64 = edges
                        .iter()
                        .filter(|e| e.0 == Some(f))
                        .map(|e| e.2.inclusive_ns)
                        .sum();
                    assert!(
                        out <= s.inclusive_ns,
                        "seed {seed} f {f:?}: {out} > {}",
                        s.inclusive_ns
                    );
                }
            }
            let tree = a.call_tree().unwrap();
            let tree_excl: u64 = tree.nodes().map(|(_, n)| n.exclusive_ns).sum();
            let tree_calls: u64 = tree.nodes().map(|(_, n)| n.calls).sum();
            assert_eq!((tree_excl, tree_calls), (excl_sum, calls));
        }
    }
}
