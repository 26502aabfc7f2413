//! `benchgate analyze` on real result files (tests/fixtures/aa-ab) and on bad input.

use std::path::PathBuf;

use benchgate_api::VerdictKind;
use benchgate_harness::cli::analyze::analyze;
use benchgate_harness::cli::{AnalyzeArgs, format_report};
use clap::Parser;

fn fixture(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aa-ab/go-bent");
    dir.join(name).to_string_lossy().into_owned()
}

fn run(argv: &[&str]) -> Result<benchgate_harness::cli::analyze::AnalyzeOutcome, String> {
    let args = AnalyzeArgs::try_parse_from(std::iter::once("analyze").chain(argv.iter().copied()))
        .map_err(|e| e.to_string())?;
    analyze(&args).map_err(|e| e.to_string())
}

const GO_BASE: &str = "Go1.17-opt.20220105T213212.txt";
const GO_HEAD: &str = "b5bfaf410a-opt.20220105T213212.txt";
const GO_NEXT_DAY: &str = "Go1.17-opt.20220106T213210.txt";

#[test]
fn go_toolchain_change_finds_real_regressions_and_improvements() {
    let outcome = run(&[&fixture(GO_BASE), &fixture(GO_HEAD), "--format", "go"]).unwrap();
    let report = outcome.evaluation.report();
    let count = |v| report.benchmarks.iter().filter(|b| b.verdict == v).count();
    assert!(report.benchmarks.len() > 200, "{}", report.benchmarks.len());
    assert!(count(VerdictKind::Slower) > 0 && count(VerdictKind::Faster) > 0);
    // A known row: building Ethereum_storage got slower with the new toolchain.
    let row = report
        .benchmarks
        .iter()
        .find(|b| b.name == "BenchmarkEthereum_storage" && b.metric == "build-user-ns/op")
        .unwrap();
    assert_eq!((row.n, row.verdict), (25, VerdictKind::Slower));
    // Unequal counts pair the common prefix and are warned about with both counts.
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("has 21 sample(s)") && w.contains("has 23")),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn same_toolchain_next_day_is_mostly_undecided_or_equivalent() {
    let ab = run(&[&fixture(GO_BASE), &fixture(GO_HEAD), "--format", "auto"]).unwrap();
    let aa = run(&[&fixture(GO_BASE), &fixture(GO_NEXT_DAY)]).unwrap();
    let claims = |o: &benchgate_harness::cli::analyze::AnalyzeOutcome| {
        o.evaluation
            .report()
            .benchmarks
            .iter()
            .filter(|b| matches!(b.verdict, VerdictKind::Slower | VerdictKind::Faster))
            .count()
    };
    // Day-to-day drift is real (that is what A/A floors are for), but the toolchain change
    // makes clearly more claims than identical code does.
    assert!(
        claims(&aa) < claims(&ab),
        "A/A {} vs A/B {}",
        claims(&aa),
        claims(&ab)
    );
}

#[test]
fn an_aa_floor_widens_the_margin() {
    let without = run(&[&fixture(GO_BASE), &fixture(GO_HEAD), "--format", "go"]).unwrap();
    let with = run(&[
        &fixture(GO_BASE),
        &fixture(GO_HEAD),
        "--format",
        "go",
        "--aa",
        &fixture(GO_BASE),
        &fixture(GO_NEXT_DAY),
    ])
    .unwrap();
    let practical = |o: &benchgate_harness::cli::analyze::AnalyzeOutcome| {
        o.evaluation
            .report()
            .benchmarks
            .iter()
            .filter(|b| b.practical)
            .count()
    };
    assert!(practical(&with) <= practical(&without));
    assert!(
        run(&[
            &fixture(GO_BASE),
            &fixture(GO_HEAD),
            "--aa",
            &fixture(GO_BASE)
        ])
        .is_err()
    );
}

#[test]
fn the_report_shows_a_geomean_summary_and_notes_under_the_table() {
    let printed = |extra: &[&str]| {
        let (base, head) = (fixture(GO_BASE), fixture(GO_HEAD));
        let argv = ["analyze", &base, &head, "--format", "go"];
        let args = AnalyzeArgs::try_parse_from(argv.iter().chain(extra)).unwrap();
        let outcome = analyze(&args).unwrap();
        format_report(&outcome.evaluation, &args.output, &[])
    };
    let table = printed(&[]);
    // 101 benchmarks report `time`; the others (build-*-ns/op) have no time metric.
    assert!(
        table.contains(
            "\nGeomean of 101 benchmarks' time: -0.14% (a summary, not a verdict; it never gates).\n"
        ),
        "{table}"
    );
    let notes = table
        .split("\nNotes (")
        .nth(1)
        .expect("the notes follow the table");
    assert!(
        notes.contains("BenchmarkShopify_sarama build-user-ns/op: drift: head/base moves -0.13% per round (t = -2.6)"),
        "{notes}"
    );
    // The header, at most 20 notes, and how many more --json has.
    assert!(notes.lines().count() <= 1 + 20 + 1, "{notes}");

    let markdown = printed(&["--markdown"]);
    assert!(
        markdown.contains("\nGeomean of 101 benchmarks' time: -0.14%"),
        "{markdown}"
    );
    assert!(markdown.contains("\n**Notes** ("), "{markdown}");
    assert!(
        markdown.contains("\n- BenchmarkShopify_sarama build-user-ns/op: drift"),
        "{markdown}"
    );
    // The geomean is a summary line, never a row of the gate.
    let json = printed(&["--json"]);
    assert!(
        !json.contains("Geomean") && json.contains("\"warnings\""),
        "{json}"
    );
}

fn files(base: &str, head: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (b, h) = (dir.path().join("base.txt"), dir.path().join("head.txt"));
    std::fs::write(&b, base).unwrap();
    std::fs::write(&h, head).unwrap();
    let s = |p: PathBuf| p.to_string_lossy().into_owned();
    (dir, s(b), s(h))
}

#[test]
fn raw_numbers_pair_by_order() {
    let base = "102.1\n99.8\n101.5\n100.2\n98.9\n100.7\n101.9\n99.5\n100.4\n100.0\n";
    let head = "104.0\n102.3\n103.1\n104.9\n101.2\n103.5\n103.0\n103.8\n102.2\n113.0\n";
    let (_dir, b, h) = files(base, head);
    let report = run(&[&b, &h, "--format", "raw"])
        .unwrap()
        .evaluation
        .report();
    let row = &report.benchmarks[0];
    assert_eq!(row.n, 10);
    // The reference numbers: the running interval at n = 10 is [+0.712%, +4.404%].
    let [lo, hi] = row.interval_pct;
    assert!(
        (lo.unwrap() - 0.712).abs() < 0.01 && (hi.unwrap() - 4.404).abs() < 0.01,
        "{row:?}"
    );
    assert_eq!(row.verdict, VerdictKind::Slower);
}

#[test]
fn bad_values_name_the_file_and_line() {
    let (_dir, b, h) = files("1.0\n2.0\nfast\n", "1.0\n2.0\n3.0\n");
    let err = run(&[&b, &h, "--format", "raw"]).unwrap_err();
    assert!(err.contains("base.txt") && err.contains("line 3"), "{err}");

    let (_dir, b, h) = files("1.0\n2.0\n3.0\n", "# run 2\n1.0\n\n-2.0\n");
    let err = run(&[&b, &h, "--format", "raw"]).unwrap_err();
    assert!(
        err.contains("head.txt") && err.contains("line 4") && err.contains("positive"),
        "{err}"
    );

    let (_dir, b, h) = files("1.0\n0\n", "1.0\n2.0\n");
    let err = run(&[&b, &h, "--format", "raw"]).unwrap_err();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn unequal_counts_pair_the_common_prefix_with_a_warning() {
    let (_dir, b, h) = files("1\n2\n3\n4\n5\n", "1\n2\n3\n");
    let outcome = run(&[&b, &h, "--format", "raw"]).unwrap();
    assert_eq!(outcome.evaluation.report().benchmarks[0].n, 3);
    assert!(outcome.warnings[0].contains("has 5") && outcome.warnings[0].contains("has 3"));
}

#[test]
fn empty_files_and_unknown_formats_are_clear_errors() {
    let (_dir, b, h) = files("  \n", "1\n");
    assert!(run(&[&b, &h]).unwrap_err().contains("is empty"));
    let (_dir, b, h) = files("1\n2\n", "1\n2\n");
    let err = run(&[&b, &h, "--format", "nonsense"]).unwrap_err();
    assert!(err.contains("unknown benchmark format"), "{err}");
    let err = run(&["/nonexistent/base.txt", &h]).unwrap_err();
    assert!(err.contains("cannot read /nonexistent/base.txt"), "{err}");
}
