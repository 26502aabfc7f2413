//! `benchgate analyze` on real result files (tests/fixtures/aa-ab, tests/fixtures/real) and on
//! bad input: runs, not iterations, are the unit, and two recordings are never paired.

use std::path::PathBuf;

use benchgate_api::VerdictKind;
use benchgate_harness::cli::analyze::analyze;
use benchgate_harness::cli::{AnalyzeArgs, format_report};
use benchgate_harness::evaluate::FailOn;
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

fn pyperf(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real/pyperf");
    dir.join(name).to_string_lossy().into_owned()
}

const PY36: &str = "pyperf-mult_list_py36.json";
const PY37: &str = "pyperf-mult_list_py37.json";

/// bent runs every benchmark binary 25 times, one process each with its own `goos:` header:
/// those processes are the runs (25 + 25), so the A/A pair (two nights, the same toolchain)
/// can be analysed, and claims nothing; the build-time rows, one process per file, cannot. The
/// A/B pair (another toolchain) finds real changes.
#[test]
fn go_processes_in_one_file_are_its_runs_and_the_a_a_claims_nothing() {
    let aa = run(&[&fixture(GO_BASE), &fixture(GO_NEXT_DAY), "--format", "go"]).unwrap();
    assert!(
        aa.formats_read[0].ends_with("read as go (as configured), 966 runs"),
        "{:?}",
        aa.formats_read
    );
    assert!(
        aa.formats_read
            .contains(&"runs found: base 966, head 966".to_owned())
    );
    let report = aa.evaluation.report();
    let row = |r: &benchgate_harness::cli::analyze::AnalyzeOutcome, name: &str, metric: &str| {
        r.evaluation
            .report()
            .benchmarks
            .into_iter()
            .find(|b| b.name == name && b.metric == metric)
            .unwrap_or_else(|| panic!("{name} {metric}"))
    };
    let claims: Vec<_> = report
        .benchmarks
        .iter()
        .filter(|b| matches!(b.verdict, VerdictKind::Slower | VerdictKind::Faster))
        .collect();
    assert!(claims.is_empty(), "A/A claims: {claims:#?}");
    let zap = "go.uber.org/zap/zapcore.BenchmarkZapJSON-12";
    assert_eq!(row(&aa, zap, "time").runs, Some([25, 25]));
    let build = row(&aa, "BenchmarkEthereum_storage", "build-real-ns/op");
    assert_eq!(
        (build.runs, build.verdict),
        (Some([1, 1]), VerdictKind::NotAnalysed)
    );
    assert!(!aa.evaluation.has_regression(FailOn::Regression));

    let ab = run(&[&fixture(GO_BASE), &fixture(GO_HEAD), "--format", "go"]).unwrap();
    let zap_json = row(&ab, zap, "time");
    assert_eq!(zap_json.verdict, VerdictKind::Slower, "{zap_json:?}");
    assert!(ab.evaluation.has_regression(FailOn::Regression));
}

/// pyperf starts a worker process per run: 20 runs of 3 values each are 20 runs. The large real
/// changes between Python 3.6 and 3.7 are found with the runs as the unit; the −1.7% one, which
/// 60 values taken as pairs called faster, needs more runs.
#[test]
fn pyperf_runs_are_the_unit_and_a_real_change_is_found() {
    let outcome = run(&[&pyperf(PY36), &pyperf(PY37)]).unwrap();
    assert!(
        outcome.formats_read[0].ends_with("read as pyperf (auto-detected), 20 runs"),
        "{:?}",
        outcome.formats_read
    );
    let report = outcome.evaluation.report();
    let row = |name: &str| report.benchmarks.iter().find(|b| b.name == name).unwrap();
    assert_eq!(row("[1,2]*1000").runs, Some([20, 20]));
    assert_eq!(row("[1,2]*1000").verdict, VerdictKind::Slower);
    assert_eq!(row("[1,2,3]*1000").verdict, VerdictKind::Slower);
    // The −1.7% change is shown not slower than the default 5% tolerance; without a
    // tolerance it needs more runs to be told from zero or from ±M.
    assert_eq!(row("[1]*1000").verdict, VerdictKind::NotSlower);
    assert!(outcome.evaluation.has_regression(FailOn::Regression));
    let off = run(&[&pyperf(PY36), &pyperf(PY37), "--tolerance", "off"]).unwrap();
    let report = off.evaluation.report();
    let row = |name: &str| report.benchmarks.iter().find(|b| b.name == name).unwrap();
    assert_eq!(row("[1]*1000").verdict, VerdictKind::NoResultYet);
}

#[test]
fn an_aa_floor_of_recordings_is_used_and_pairs_are_required() {
    let with = run(&[
        &pyperf(PY36),
        &pyperf(PY37),
        "--aa",
        &pyperf(PY36),
        &pyperf(PY36),
        &pyperf(PY37),
        &pyperf(PY37),
    ])
    .unwrap();
    let args = AnalyzeArgs::try_parse_from(["analyze", "a", "b"]).unwrap();
    let table = format_report(&with.evaluation, &args.output, &[]);
    assert!(
        table.contains("A/A floor: s_aa ") && table.contains("from 2 session(s)"),
        "{table}"
    );
    let err = run(&[&pyperf(PY36), &pyperf(PY37), "--aa", &pyperf(PY36)]).unwrap_err();
    assert!(err.contains("in pairs"), "{err}");
}

#[test]
fn the_report_counts_runs_and_says_what_it_cannot_cancel() {
    let args = AnalyzeArgs::try_parse_from(["analyze", "a", "b"]).unwrap();
    let outcome = run(&[&pyperf(PY36), &pyperf(PY37)]).unwrap();
    let table = format_report(&outcome.evaluation, &args.output, &outcome.context);
    let header = table.lines().find(|l| l.starts_with("benchmark")).unwrap();
    assert!(
        header.contains("runs") && !header.contains("pairs"),
        "{table}"
    );
    assert!(table.contains("  20+20  "), "{table}");
    assert!(
        table.contains("interval of two independent sets of runs")
            && table.contains("drift of the machine between the recordings is not cancelled")
            && table.contains("Tuned for the runs recorded"),
        "{table}"
    );
    assert!(
        table.contains("\nGeomean of 3 benchmarks' time: "),
        "{table}"
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

/// A directory of recordings, one `raw` file per run.
fn run_dir(dir: &std::path::Path, side: &str, values: &[f64]) -> String {
    let d = dir.join(side);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("README.md"), "not a recording\n").unwrap();
    for (i, v) in values.iter().enumerate() {
        // Two lines per file: two runs.
        std::fs::write(
            d.join(format!("run{i:02}.txt")),
            format!("{v}\n{}\n", v * 1.001),
        )
        .unwrap();
    }
    d.to_string_lossy().into_owned()
}

/// A `raw` line is a whole-program time, one run: four lines a side are four runs, and a
/// directory of files holds all their lines.
#[test]
fn a_raw_line_is_one_run_and_a_directory_of_files_holds_them_all() {
    // The one row of two `raw` files.
    let raw_row = |base: &str, head: &str| {
        let (_dir, b, h) = files(base, head);
        let report = run(&[&b, &h, "--format", "raw"])
            .unwrap()
            .evaluation
            .report();
        (report.benchmarks[0].runs, report.benchmarks[0].verdict)
    };
    assert_eq!(
        raw_row("100\n101\n99\n100\n", "110\n111\n109\n110\n"),
        (Some([4, 4]), VerdictKind::Slower)
    );
    assert_eq!(
        raw_row("100\n", "110\n"),
        (Some([1, 1]), VerdictKind::NotAnalysed)
    );

    let dir = tempfile::tempdir().unwrap();
    let base = [
        100.2, 99.1, 101.0, 100.4, 99.6, 100.9, 99.8, 100.1, 100.6, 99.3,
    ];
    let head: Vec<f64> = base.iter().rev().map(|v| v * 1.1).collect();
    let (b, h) = (
        run_dir(dir.path(), "base", &base),
        run_dir(dir.path(), "head", &head[..8]),
    );
    let outcome = run(&[&b, &h, "--format", "raw"]).unwrap();
    let row = &outcome.evaluation.report().benchmarks[0];
    assert_eq!(row.runs, Some([20, 16]), "two lines a file");
    assert_eq!(row.verdict, VerdictKind::Slower);
    let [lo, hi] = row.interval_pct;
    assert!(lo.unwrap() < 10.0 && 10.0 < hi.unwrap(), "{row:?}");
    assert_eq!(
        outcome.formats_read.len(),
        19,
        "18 recordings (the README is none) and the runs found"
    );
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
fn empty_files_and_unknown_formats_are_clear_errors() {
    let (_dir, b, h) = files("  \n", "1\n");
    assert!(run(&[&b, &h]).unwrap_err().contains("is empty"));
    let (_dir, b, h) = files("1\n2\n", "1\n2\n");
    let err = run(&[&b, &h, "--format", "nonsense"]).unwrap_err();
    assert!(
        err.contains("invalid value 'nonsense'") && err.contains("pyperf"),
        "{err}"
    );
    let err = run(&["/nonexistent/base.txt", &h]).unwrap_err();
    assert!(err.contains("cannot read /nonexistent/base.txt"), "{err}");
}

/// A `compare --record` file holds both sides' interleaved rounds, not one side's results:
/// analyze says so instead of listing every harness it is not.
#[test]
fn a_compare_record_is_named_as_such() {
    let record =
        r#"{"machine": {"cpu": "x"}, "schedule": "abba", "rounds": [], "format": "command"}"#;
    let (_dir, b, h) = files(record, record);
    let err = run(&[&b, &h]).unwrap_err();
    assert!(
        err.contains("cannot tell its format") && err.contains("`benchgate compare --record` file"),
        "{err}"
    );
}
