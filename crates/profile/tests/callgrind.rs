//! Real callgrind output (tests/fixtures/README.md says how it was made): folded exactly, and
//! compared as a gungraun suite's profile is.

use benchgate_profile::{changes, collapse_callgrind, differential_svg};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn callgrind_costs_fold_to_the_instruction_counts_callgrind_reports() {
    let base = collapse_callgrind(&fixture("base.callgrind.out"), "bench").unwrap();
    let head = collapse_callgrind(&fixture("head.callgrind.out"), "bench").unwrap();
    // The totals valgrind printed ("I refs"): every instruction is some function's own.
    assert_eq!(base.total(), 36_122_268);
    assert_eq!(head.total(), 46_122_279);
    let slow = head
        .stacks()
        .find(|(s, _)| *s == "bench;slow_path")
        .map(|(_, c)| c)
        .unwrap();
    assert!((10_000_000..=10_000_020).contains(&slow), "{slow}");
    let ranked = changes(&base, &head);
    assert_eq!(ranked[0].function, "slow_path");
    assert!(ranked[0].self_pp > 20.0, "{:?}", ranked[0]);
    assert_eq!(ranked[1].function, "base_work");
    assert!(ranked[1].self_pp < 0.0);
    let svg = differential_svg(&base, &head, "callgrind").unwrap();
    assert!(svg.contains("slow_path"));
}
