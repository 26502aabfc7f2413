//! `benchgate analyze` on the procedures people already follow by hand: ten whole-program
//! times a side (one per line), `go test` appended from several processes, allocation counts
//! from one process, each with and without `--paired`.

use std::path::Path;

use benchgate_api::VerdictKind;
use benchgate_harness::cli::analyze::{AnalyzeOutcome, PAIRED_NOTE, analyze};
use benchgate_harness::cli::{AnalyzeArgs, format_report};
use benchgate_harness::evaluate::FailOn;
use clap::Parser;

fn run(argv: &[&str]) -> Result<AnalyzeOutcome, String> {
    let args = AnalyzeArgs::try_parse_from(std::iter::once("analyze").chain(argv.iter().copied()))
        .map_err(|e| e.to_string())?;
    analyze(&args).map_err(|e| e.to_string())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn row(outcome: &AnalyzeOutcome, name: &str, metric: &str) -> benchgate_api::BenchmarkResult {
    outcome
        .evaluation
        .report()
        .benchmarks
        .into_iter()
        .find(|b| b.name == name && b.metric == metric)
        .unwrap_or_else(|| panic!("no row {name} {metric}"))
}

/// The ten times of shared/practice's first write-up ("the ten times sum to 1006.0 ms", the
/// squared deviations 0.36, 6.76, 3.61, 0.81, 13.69, 12.25, 1.69, 4.84, 9.00, 1.69; the fifth
/// run 96.9 ms, the slowest 104.1 ms), in ms.
const TEN_TIMES: [f64; 10] = [
    100.0, 103.2, 98.7, 101.5, 96.9, 104.1, 101.9, 102.8, 97.6, 99.3,
];

/// The write-up's procedure: ten whole-program times of each build, one per line, against a
/// build 4% faster. Read as ten runs a side, the fixed-n two-sample interval is the write-up's
/// "4.0 ± 2.2 per cent, somewhere between 1.8 and 6.2" (with the t quantile for 18 degrees of
/// freedom instead of its 2); the anytime-valid interval is wider. `--paired` (the runs were
/// interleaved A, B, A, B) uses compare's paired interval.
#[test]
fn ten_whole_program_times_a_side_are_ten_runs() {
    let mean = TEN_TIMES.iter().sum::<f64>() / 10.0;
    let sd = (TEN_TIMES.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 9.0).sqrt();
    assert!(
        (mean - 100.60).abs() < 1e-9 && (sd - 2.465).abs() < 0.001,
        "{mean} {sd}"
    );
    // The faster build's runs: the same spread, in another order.
    let head: Vec<f64> = (0..10).map(|i| 0.96 * TEN_TIMES[(i + 3) % 10]).collect();
    let lines = |v: &[f64]| v.iter().map(|t| format!("{t:.2} ms\n")).collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.txt", &lines(&TEN_TIMES));
    let new = write(dir.path(), "new.txt", &lines(&head));

    let unpaired = run(&[&old, &new, "--format", "raw"]).unwrap();
    let r = row(&unpaired, "raw", "time");
    assert_eq!(r.runs, Some([10, 10]));
    assert!((r.change_pct.unwrap() + 4.0).abs() < 0.01, "{r:?}");
    let [lo, hi] = r.fixed_interval_pct.map(Option::unwrap);
    assert!(
        (-6.4..-6.0).contains(&lo) && (-2.0..-1.6).contains(&hi),
        "{lo} {hi}"
    );
    let [any_lo, any_hi] = r.interval_pct;
    assert!(any_lo.is_none_or(|a| a < lo) && any_hi.is_none_or(|a| a > hi));
    assert!(
        unpaired
            .formats_read
            .contains(&"runs found: base 10, head 10".to_owned())
    );
    let fixed_n = "Fixed-n t interval (Welch), valid for one look at these runs only, not safe \
                   to peek: raw time -4.0% [-6.2%, -1.8%]";
    assert!(
        unpaired.context.contains(&fixed_n.to_owned()),
        "{:?}",
        unpaired.context
    );

    let paired = run(&[&old, &new, "--format", "raw", "--paired"]).unwrap();
    let r = row(&paired, "raw", "time");
    assert_eq!((r.runs, r.n), (None, 10), "ten pairs: {r:?}");
    assert!((r.change_pct.unwrap() + 4.0).abs() < 0.5, "{r:?}");
    assert_eq!(paired.context[0], PAIRED_NOTE);

    // Pairs need the same number of runs on each side.
    let short = write(dir.path(), "short.txt", &lines(&head[..9]));
    let err = run(&[&old, &short, "--format", "raw", "--paired"]).unwrap_err();
    assert!(
        err.contains("base has 10 runs and head 9") && err.contains("leave out --paired"),
        "{err}"
    );
}

/// One process of real `go test -bench . -benchmem` output (jobergner/backent-cli,
/// `examples/engine/benchmark_results.txt` at 01e9692493a0, its first block; see
/// tests/fixtures/real/README.md), with the ns/op of each line scaled by `scale`.
fn go_process(count: usize, scale: impl Fn(usize) -> f64) -> String {
    let lines = [
        (
            "BenchmarkAssembleTreeForceInclude-12",
            3,
            491831666.0,
            191727930,
            2084886,
        ),
        (
            "BenchmarkAssembleTree-12",
            1,
            1146506211.0,
            374948632,
            3790856,
        ),
        ("BenchmarkEngine-12", 2, 1068673783.0, 326759808, 3383263),
        ("BenchmarkUpdateState-12", 849, 1488118.0, 445232, 1070),
        (
            "BenchmarkElementModificaton-12",
            164,
            8024566.0,
            2829890,
            4818,
        ),
    ];
    let mut text = String::from(
        "goos: linux\ngoarch: amd64\npkg: github.com/jobergner/backent-cli/examples/engine\n",
    );
    let mut k = 0;
    for (name, iterations, ns, bytes, allocs) in lines {
        for _ in 0..count {
            text.push_str(&format!(
                "{name:<40}\t{iterations:>8}\t{:>10.0} ns/op\t{bytes:>9} B/op\t{allocs:>8} allocs/op\n",
                ns * scale(k)
            ));
            k += 1;
        }
    }
    text.push_str("PASS\nok  \tgithub.com/jobergner/backent-cli/examples/engine\t11.698s\n");
    text
}

/// The interleaved loop reviewers ask for (`for i in 1..5: checkout main && go test -count=2
/// >> old.txt; checkout perf && go test … >> new.txt`): five processes a side, each its own
/// header and `ok` line, are 5 + 5 runs. Head is 20% faster in ns/op; its allocations are the
/// same, exactly. The same with `--paired`.
#[test]
fn five_appended_go_processes_a_side_are_five_runs() {
    // A process-to-process wobble of a few per cent, and less between the -count lines.
    let wobble = |process: usize| {
        move |k: usize| {
            1.0 + 0.02 * (((process * 7 + 3) % 5) as f64 - 2.0) / 2.0
                + 0.004 * ((k % 3) as f64 - 1.0)
        }
    };
    let old: String = (0..5).map(|p| go_process(2, wobble(p))).collect();
    let new: String = (0..5)
        .map(|p| go_process(2, move |k| 0.8 * wobble(p + 2)(k)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (
        write(dir.path(), "old.txt", &old),
        write(dir.path(), "new.txt", &new),
    );
    let args = AnalyzeArgs::try_parse_from(["analyze", "a", "b"]).unwrap();
    for paired in [false, true] {
        // Five runs a side: the tail guard would hold the pass until a slow mode in 1 of 5
        // runs could have shown (11 at least); this test is about what a run is.
        let mut argv = vec![
            old.as_str(),
            new.as_str(),
            "--format",
            "go",
            "--rare-slow-runs",
            "off",
        ];
        if paired {
            argv.push("--paired");
        }
        let outcome = run(&argv).unwrap();
        assert!(
            outcome.formats_read[0].ends_with("read as go (as configured), 5 runs"),
            "{:?}",
            outcome.formats_read
        );
        let engine = row(&outcome, "BenchmarkEngine-12", "time");
        assert_eq!(
            engine.verdict,
            VerdictKind::Faster,
            "paired {paired}: {engine:?}"
        );
        assert!(
            (engine.change_pct.unwrap() + 20.0).abs() < 2.0,
            "{engine:?}"
        );
        if !paired {
            assert_eq!(engine.runs, Some([5, 5]));
        }
        let allocs = row(&outcome, "BenchmarkEngine-12", "allocs_per_op");
        assert_eq!(allocs.verdict, VerdictKind::Exact, "{allocs:?}");
        let table = format_report(&outcome.evaluation, &args.output, &outcome.context);
        let line = table
            .lines()
            .find(|l| l.contains("BenchmarkEngine-12") && l.contains("allocs_per_op"))
            .unwrap();
        assert!(line.contains("±0 (exact)"), "{line}");
        assert!(!outcome.evaluation.has_regression(FailOn::Regression));
    }
}

/// Allocation counts as corroboration: one `go test -benchmem` process a side, a benchmark that
/// went from 0 to 16 B/op and 0 to 1 allocs/op. The counts are exact with one run; the timing
/// row of the same files has one run a side and says so. (By the usual rules the benchmark
/// gates on its time; a suite rule naming the count makes it gate: tests/cli_local.rs.)
#[test]
fn counts_from_one_go_process_a_side_are_exact() {
    let process = |bytes: u64, allocs: u64| {
        format!(
            "goos: linux\ngoarch: amd64\npkg: github.com/jobergner/backent-cli/examples/engine\n\
             BenchmarkUpdateState-12     \t     849\t   1488118 ns/op\t  {bytes} B/op\t    {allocs} allocs/op\n\
             PASS\nok  \tgithub.com/jobergner/backent-cli/examples/engine\t11.698s\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.txt", &process(0, 0));
    let new = write(dir.path(), "new.txt", &process(16, 1));
    let outcome = run(&[&old, &new, "--format", "go"]).unwrap();
    let bytes = row(&outcome, "BenchmarkUpdateState-12", "bytes_per_op");
    assert_eq!(
        (bytes.verdict, bytes.runs),
        (VerdictKind::Exact, Some([1, 1])),
        "{bytes:?}"
    );
    let args = AnalyzeArgs::try_parse_from(["analyze", "a", "b"]).unwrap();
    let table = format_report(&outcome.evaluation, &args.output, &outcome.context);
    assert!(table.contains("0 B → 16 B (exact)"), "{table}");
    let time = row(&outcome, "BenchmarkUpdateState-12", "time");
    assert_eq!(time.verdict, VerdictKind::NotAnalysed);
    assert!(
        time.reason
            .as_deref()
            .unwrap()
            .starts_with("one run per side"),
        "{time:?}"
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("1 of 3 series have one run per side")),
        "{:?}",
        outcome.warnings
    );

    // Runs of a count that disagree are not exact: analysed like a timing, and said.
    let two = |a: u64, b: u64| format!("{}{}", process(a, 1), process(b, 1));
    let old = write(dir.path(), "old2.txt", &two(16, 16));
    let new = write(dir.path(), "new2.txt", &two(16, 24));
    let outcome = run(&[&old, &new, "--format", "go"]).unwrap();
    let bytes = row(&outcome, "BenchmarkUpdateState-12", "bytes_per_op");
    assert_ne!(bytes.verdict, VerdictKind::Exact, "{bytes:?}");
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w
                .contains("bytes_per_op: its harness counts it exactly, but the values disagree")),
        "{:?}",
        outcome.warnings
    );
}

/// `--help` says, for every format, what one run is.
#[test]
fn help_says_what_a_run_is_per_format() {
    use clap::CommandFactory;
    let help = AnalyzeArgs::command().render_long_help().to_string();
    assert!(help.contains("raw: every line is one run"), "{help}");
    assert!(
        help.contains("go: a `goos:`/`pkg:` header after results"),
        "{help}"
    );
    assert!(help.contains("--paired"), "{help}");
    // A tolerance is a slowdown above zero, or off.
    for bad in ["0", "fast", "100"] {
        let err = run(&["a", "b", "--tolerance", bad]).unwrap_err();
        assert!(err.contains("above 0, below 100"), "{bad}: {err}");
    }
}

fn real_go(name: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real/go")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Real appended outputs: a results file that `go test -bench=. -benchmem >>` grew nine times
/// (with dates and comments between the processes) is nine runs; bent's stdout, 30 packages
/// interleaved over 25 rounds, gives each benchmark its 25 runs a side.
#[test]
fn real_appended_go_outputs_are_read_as_their_processes() {
    let backent = real_go("backent-cli-engine-benchmark_results.txt");
    let outcome = run(&[&backent, &backent, "--format", "go"]).unwrap();
    assert!(
        outcome.formats_read[0].ends_with("read as go (as configured), 9 runs"),
        "{:?}",
        outcome.formats_read
    );
    let base = real_go("perf-bent-Base.stdout.txt");
    let tip = real_go("perf-bent-Tip.stdout.txt");
    let outcome = run(&[&base, &tip, "--format", "go"]).unwrap();
    let report = outcome.evaluation.report();
    let time_rows: Vec<_> = report
        .benchmarks
        .iter()
        .filter(|b| b.metric == "time")
        .collect();
    assert!(!time_rows.is_empty());
    assert!(
        time_rows.iter().all(|b| b.runs == Some([25, 25])),
        "{:?}",
        time_rows
            .iter()
            .map(|b| (&b.name, b.runs))
            .collect::<Vec<_>>()
    );
}

/// criterion's stdout of one suite appended three times (`cargo bench >> out.txt` in a loop; the
/// real file excsn/fibre `cache/docs/benches.md`, tests/fixtures/real/README.md): every
/// benchmark printed again starts the next process, so three runs a side.
#[test]
fn appended_criterion_stdout_is_one_run_per_process() {
    let one = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/criterion/fibre-cache-benches.txt"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The published file lacks a final newline; a process's own output ends with one.
    let one = format!("{}\n", one.trim_end());
    let three = write(dir.path(), "three.txt", &one.repeat(3));
    let outcome = run(&[&three, &three, "--format", "criterion"]).unwrap();
    assert!(
        outcome.formats_read[0]
            .ends_with("read as criterion (as configured), 3 runs, each a summary (one aggregate per benchmark)"),
        "{:?}",
        outcome.formats_read
    );
    let report = outcome.evaluation.report();
    assert!(report.benchmarks.len() > 100);
    assert!(
        report.benchmarks.iter().all(|b| b.runs == Some([3, 3])),
        "{:?}",
        report.benchmarks.iter().find(|b| b.runs != Some([3, 3]))
    );
}

/// The same build timed ten times again (the write-up's times in another order): the change is
/// shown not slower than the default 5% tolerance, so the gate passes without waiting for the
/// interval to fit inside ±1% (CONVENTIONS 21: the words are a snapshot).
#[test]
fn a_rerun_of_the_same_build_is_not_slower_than_the_tolerance() {
    let again: Vec<f64> = (0..10).map(|i| TEN_TIMES[(i + 7) % 10]).collect();
    let lines = |v: &[f64]| v.iter().map(|t| format!("{t:.2} ms\n")).collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.txt", &lines(&TEN_TIMES));
    let new = write(dir.path(), "new.txt", &lines(&again));
    let outcome = run(&[&old, &new, "--format", "raw"]).unwrap();
    let r = row(&outcome, "raw", "time");
    assert_eq!(r.verdict, VerdictKind::NotSlower, "{r:?}");
    assert_eq!(
        outcome.evaluation.outcome(FailOn::Regression),
        benchgate_stats::GateOutcome::Pass
    );
    let args = AnalyzeArgs::try_parse_from(["analyze", "a", "b"]).unwrap();
    let table = format_report(&outcome.evaluation, &args.output, &outcome.context);
    insta::assert_snapshot!("analyze_not_slower_than_the_tolerance", table);
    // Without a tolerance the gate waits for equivalence within ±M.
    let off = run(&[&old, &new, "--format", "raw", "--tolerance", "off"]).unwrap();
    assert_eq!(row(&off, "raw", "time").verdict, VerdictKind::NoResultYet);
}
