//! Real `perf script` output recorded on the development VM (tests/fixtures/README.md says
//! how): collapsed, compared, drawn and capped as the server will.

use benchgate_profile::{
    DEEPER_FRAMES, Folded, Limits, changes, collapse_perf_script, differential_svg, lacks_symbols,
    unresolved_share,
};

fn fixture(name: &str) -> Folded {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    collapse_perf_script(&script).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn collapsing_real_perf_script_names_the_programs_functions() {
    let base = fixture("base.perf-script.txt");
    assert_eq!(
        base.total(),
        90,
        "one count per sample, whatever its period"
    );
    // The process name is the root frame; each part of base_work has about a third.
    for part in ["parse_input", "compute", "write_output"] {
        let stack = format!("prog;__libc_start_call_main;main;base_work;{part}");
        let count = base.stacks().find(|(s, _)| *s == stack).map(|(_, c)| c);
        assert!(count.is_some_and(|c| c >= 25), "{stack}: {count:?}");
    }
    assert!(!lacks_symbols(&base));
    assert_eq!(unresolved_share(&base), 0.0);
    assert_eq!(Folded::parse(&base.to_text()).unwrap(), base);
}

#[test]
fn a_stripped_binary_shows_addresses_and_lacks_symbols() {
    let stripped = fixture("stripped.perf-script.txt");
    let text = stripped.to_text();
    assert!(text.contains("[prog-stripped <"), "{text}");
    assert!(lacks_symbols(&stripped));
    assert!(
        unresolved_share(&stripped) > 95.0,
        "{}",
        unresolved_share(&stripped)
    );
}

#[test]
fn a_head_that_also_runs_slow_path_ranks_slow_path_first() {
    let (base, head) = (
        fixture("base.perf-script.txt"),
        fixture("head-slow-path.perf-script.txt"),
    );
    let ranked = changes(&base, &head);
    let first = &ranked[0];
    assert_eq!(first.function, "slow_path", "{ranked:#?}");
    assert!(first.self_pp > 25.0, "{first:?}");
    assert!(first.total_pp > 25.0, "{first:?}");
    assert_eq!(first.base_self_share, 0.0);
    // The three parts of base_work gave up the share slow_path took.
    let base_work = ranked.iter().find(|c| c.function == "base_work").unwrap();
    assert!(base_work.total_pp < -25.0, "{base_work:?}");
    for part in ["parse_input", "compute", "write_output"] {
        let c = ranked.iter().find(|c| c.function == part).unwrap();
        assert!(c.self_pp < -5.0, "{c:?}");
    }
}

#[test]
fn the_differential_flame_graph_is_svg_naming_the_functions() {
    let (base, head) = (
        fixture("base.perf-script.txt"),
        fixture("head-slow-path.perf-script.txt"),
    );
    let svg = differential_svg(&base, &head, "command: head against base").unwrap();
    assert!(
        svg.starts_with("<?xml") && svg.contains("<svg"),
        "{}",
        &svg[..200]
    );
    assert!(svg.contains("slow_path") && svg.contains("base_work"));
    assert!(svg.contains("command: head against base"));
    assert!(svg.trim_end().ends_with("</svg>"));
    // Deterministic: the same profiles draw the same picture.
    assert_eq!(
        svg,
        differential_svg(&base, &head, "command: head against base").unwrap()
    );
}

#[test]
fn real_recursion_is_cut_to_the_depth_limit() {
    let deep = fixture("deep-recursion.perf-script.txt");
    let deepest = deep.stacks().map(|(s, _)| s.split(';').count()).max();
    // perf cut the call chains at kernel.perf_event_max_stack (127), plus the root frame.
    assert_eq!(deepest, Some(128));
    let untouched = deep.clone().capped(Limits::default());
    assert!(!untouched.dropped_frames);
    assert_eq!(untouched.folded, deep);

    let limits = Limits {
        max_bytes: 2048,
        max_depth: 32,
    };
    let capped = deep.clone().capped(limits);
    assert!(capped.dropped_frames);
    assert_eq!(capped.folded.total(), deep.total());
    assert!(capped.folded.to_text().len() <= limits.max_bytes);
    for (stack, _) in capped.folded.stacks() {
        let frames: Vec<&str> = stack.split(';').collect();
        assert_eq!(frames.len(), 32, "{stack}");
        assert_eq!(frames[0], "prog");
        assert_eq!(frames[31], DEEPER_FRAMES);
    }
}
