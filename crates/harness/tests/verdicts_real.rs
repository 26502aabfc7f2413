//! Verdicts on result files real projects published (tests/fixtures/real and tests/fixtures/bench,
//! provenance in their READMEs), analysed as `analyze` does: each run counts once and the two
//! sides are independent sets of runs. A file against itself, or one half of its runs against
//! the other, claims nothing; a head made worse by a known factor is never called faster, has
//! the factor inside its interval, and is found slower where the file holds enough runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchgate_api::{Direction, Measurement, VerdictKind};
use benchgate_harness::evaluate::{Evaluation, FailOn, Policy, RunsTuning, evaluate_runs};
use benchgate_harness::formats::{Format, read_results_path};
use benchgate_harness::samples::{RecordedRuns, recording_runs};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const FACTOR: f64 = 1.25;

fn policy() -> Policy {
    Policy {
        alpha: 0.05,
        n_star: 20.0,
        min_effect_pct: 1.0,
        tolerance: None,
        rules: Vec::new(),
        planned: Default::default(),
        assume_equal_spread: false,
        rare_slow_runs: None,
        gate_on: Default::default(),
    }
}

/// Every fixture file (and criterion directory) that auto-detection reads, with its format.
fn real_files() -> Vec<(PathBuf, Format, Vec<Measurement>)> {
    let mut out = Vec::new();
    for dir in ["real", "bench"] {
        walk(&Path::new(ROOT).join(dir), &mut out);
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, Format, Vec<Measurement>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.file_name().is_some_and(|n| n == "README.md") {
            continue;
        }
        // A criterion directory is one result set; other directories hold files.
        let parsed = read_results_path(Format::Auto, &path);
        match parsed {
            Ok(p) if !p.measurements.is_empty() => out.push((path, p.format, p.measurements)),
            _ if path.is_dir() => walk(&path, out),
            // Golden outputs, error cases and summaries are refused by design; their own tests
            // check the messages.
            _ => {}
        }
    }
}

/// The head: every value made worse by `factor` in its own direction.
fn worse_head(ms: &[Measurement], factor: f64) -> Vec<Measurement> {
    ms.iter()
        .map(|m| {
            let mut m = m.clone();
            m.value = match m.direction {
                Direction::LowerIsBetter => m.value * factor,
                Direction::HigherIsBetter => m.value / factor,
            };
            m
        })
        .collect()
}

/// One recording per side, analysed as `analyze` does.
fn unpaired(base: &[Measurement], head: &[Measurement]) -> Evaluation {
    let runs = RecordedRuns::from_recordings(&[base.to_vec()], &[head.to_vec()]);
    evaluate_runs(
        &runs,
        &policy(),
        &Default::default(),
        RunsTuning::RecordedRuns,
    )
}

/// A recording's runs split in two: the first half against the second, an A/A of real runs.
fn halves(ms: &[Measurement]) -> Option<(Vec<Measurement>, Vec<Measurement>)> {
    let runs = recording_runs(ms);
    if runs.len() < 4 {
        return None;
    }
    let (a, b) = runs.split_at(runs.len() / 2);
    Some((a.concat(), b.concat()))
}

fn assert_claims_nothing(eval: &Evaluation, at: &str) {
    for r in &eval.results {
        assert!(
            !matches!(r.verdict, VerdictKind::Slower | VerdictKind::Faster),
            "{at}: {} {} claims {:?} on A/A data: {r:?}",
            r.name,
            r.metric,
            r.verdict
        );
    }
    assert!(!eval.has_regression(FailOn::Regression), "{at}");
}

#[test]
fn every_real_file_against_itself_claims_nothing() {
    let files = real_files();
    let formats: std::collections::BTreeSet<&str> =
        files.iter().map(|(_, f, _)| f.as_str()).collect();
    // Every harness the docs list has real files here.
    for f in [
        "libtest",
        "criterion",
        "go",
        "hyperfine",
        "google",
        "pytest",
        "catch2",
        "dotnet",
        "jmh",
        "bmf",
        "divan",
        "pyperf",
        "gungraun",
    ] {
        assert!(formats.contains(f), "no real file read as {f}: {formats:?}");
    }
    let mut split = 0;
    for (path, _, ms) in &files {
        let at = path.display().to_string();
        assert_claims_nothing(&unpaired(ms, ms), &at);
        if let Some((first, second)) = halves(ms) {
            assert_claims_nothing(&unpaired(&first, &second), &format!("{at} (halves)"));
            split += 1;
        }
    }
    // pyperf runs, JMH forks and hyperfine runs give real A/A splits.
    assert!(split >= 5, "only {split} files hold four runs or more");
}

#[test]
fn a_head_worse_by_a_known_factor_is_slower_with_the_factor_inside_the_interval() {
    let mut decided = 0;
    let mut higher_is_better = 0;
    let mut one_run = 0;
    for (path, _, ms) in real_files() {
        let head = worse_head(&ms, FACTOR);
        let eval = unpaired(&ms, &head);
        for r in &eval.results {
            // One run per side: never a claim, however large the change.
            if r.runs == Some([1, 1]) {
                assert_eq!(
                    r.verdict,
                    VerdictKind::NotAnalysed,
                    "{}: {r:?}",
                    path.display()
                );
                one_run += 1;
            }
        }
        // A counter that is zero stays zero whatever the factor.
        for r in eval
            .results
            .iter()
            .filter(|r| r.verdict.is_analysed() && r.base_center != Some(0.0))
        {
            let at = format!("{}: {} {}", path.display(), r.name, r.metric);
            // The raw change: +25% for a time, −20% for a throughput.
            let expected = match r.direction {
                Direction::LowerIsBetter => 100.0 * (FACTOR - 1.0),
                Direction::HigherIsBetter => 100.0 * (1.0 / FACTOR - 1.0),
            };
            assert!(
                !matches!(r.verdict, VerdictKind::Faster),
                "{at}: a worse head called faster: {r:?}"
            );
            if let Some(change) = r.change_pct {
                assert!(
                    (change - expected).abs() < 1e-6,
                    "{at}: {change} vs {expected}"
                );
            }
            let [lo, hi] = r.interval_pct;
            assert!(
                lo.is_none_or(|lo| lo <= expected + 1e-9)
                    && hi.is_none_or(|hi| expected <= hi + 1e-9),
                "{at}: {expected}% outside {:?}",
                r.interval_pct
            );
            if matches!(r.verdict, VerdictKind::Slower | VerdictKind::Exact) {
                decided += 1;
                higher_is_better += usize::from(r.direction == Direction::HigherIsBetter);
            }
        }
        if eval
            .results
            .iter()
            .any(|r| r.gated && r.selected && r.verdict == VerdictKind::Slower)
        {
            assert!(
                eval.has_regression(FailOn::Regression),
                "{}",
                path.display()
            );
        }
    }
    // Not a vacuous pass: series with several runs decide, throughputs among them, and the
    // one-run files (criterion, go, libtest, …) claim nothing.
    assert!(decided > 20, "only {decided} series decided");
    assert!(
        higher_is_better > 10,
        "only {higher_is_better} throughput series decided"
    );
    assert!(one_run > 100, "only {one_run} one-run series");
}

/// A real A/B pair: pyperf's `mult_list` under Python 3.6 and 3.7 (psf/pyperf test data). The
/// verdicts mirror when the sides are swapped, and stay the same when every time is turned into
/// its reciprocal throughput (higher is better): direction decides, not the sign of the change.
#[test]
fn a_real_ab_pair_mirrors_when_swapped_and_when_read_as_throughput() {
    let dir = Path::new(ROOT).join("real/pyperf");
    let read = |f: &str| {
        read_results_path(Format::Auto, &dir.join(f))
            .unwrap()
            .measurements
    };
    let (py36, py37) = (
        read("pyperf-mult_list_py36.json"),
        read("pyperf-mult_list_py37.json"),
    );
    let verdicts = |base: &[Measurement], head: &[Measurement]| {
        let eval = unpaired(base, head);
        let fails = eval.has_regression(FailOn::Regression);
        let map: BTreeMap<String, VerdictKind> = eval
            .results
            .iter()
            .map(|r| (r.name.clone(), r.verdict))
            .collect();
        (map, fails)
    };
    let (forward, fails) = verdicts(&py36, &py37);
    assert_eq!(forward["[1,2]*1000"], VerdictKind::Slower);
    // −1.7% over 20 runs a side: not yet decided (60 values taken as pairs called it faster).
    assert_eq!(forward["[1]*1000"], VerdictKind::NoResultYet);
    assert!(fails, "a slower gated benchmark fails the gate");

    let (backward, fails) = verdicts(&py37, &py36);
    assert_eq!(backward["[1,2]*1000"], VerdictKind::Faster);
    assert_eq!(backward["[1,2,3]*1000"], VerdictKind::Faster);
    assert_eq!(backward["[1]*1000"], VerdictKind::NoResultYet);
    assert!(!fails, "nothing gated is slower the other way round");

    let throughput = |ms: &[Measurement]| -> Vec<Measurement> {
        ms.iter()
            .map(|m| {
                let mut t = Measurement::new(&m.benchmark, "throughput", "ops/s", 1e9 / m.value);
                t.run = m.run;
                t
            })
            .collect()
    };
    let (as_throughput, fails) = verdicts(&throughput(&py36), &throughput(&py37));
    assert!(as_throughput.len() == forward.len() && fails);
    for (name, verdict) in &forward {
        assert_eq!(as_throughput[name], *verdict, "{name}");
    }
}

/// A benchmark the head no longer reports stays in the report as "only in base", never gates,
/// and is in the JSON with its reason.
#[test]
fn a_benchmark_on_one_side_only_is_listed_not_dropped() {
    let dir = Path::new(ROOT).join("real/pyperf");
    let read = |f: &str| {
        read_results_path(Format::Auto, &dir.join(f))
            .unwrap()
            .measurements
    };
    let (py36, mut py37) = (
        read("pyperf-mult_list_py36.json"),
        read("pyperf-mult_list_py37.json"),
    );
    py37.retain(|m| m.benchmark != "[1]*1000");
    let eval = unpaired(&py36, &py37);
    let gone = eval
        .results
        .iter()
        .find(|r| r.name == "[1]*1000")
        .expect("the removed benchmark is still listed");
    assert_eq!(gone.verdict, VerdictKind::OnlyInBase);
    assert!(!gone.gated);
    let json = serde_json::to_value(eval.report()).unwrap();
    assert!(
        json["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["verdict"] == "only_in_base" && b["reason"] == "only the base reports it"),
        "{json}"
    );
}

/// JMH forks are runs: a real file with 5 forks per benchmark against itself, and its first two
/// forks against the other three, claim nothing; against the next commit's file (where the
/// benchmark code changed) the large drops are found and the unchanged benchmark is not called.
#[test]
fn jmh_forks_are_runs_an_aa_claims_nothing_and_a_real_change_is_found() {
    let dir = Path::new(ROOT).join("real/jmh");
    let read = |f: &str| {
        read_results_path(Format::Auto, &dir.join(f))
            .unwrap()
            .measurements
    };
    let (a, b) = (
        read("fs2-benchmark-thrpt-5forks-888abafe.json"),
        read("fs2-benchmark-thrpt-5forks-90fa7199.json"),
    );
    assert_eq!(recording_runs(&a).len(), 5);
    assert_claims_nothing(&unpaired(&a, &a), "fs2 A against itself");
    let runs = recording_runs(&a);
    let (first, rest) = runs.split_at(2);
    assert_claims_nothing(
        &unpaired(&first.concat(), &rest.concat()),
        "fs2 forks 1-2 vs 3-5",
    );

    let eval = unpaired(&a, &b);
    let verdict = |name: &str| {
        eval.results
            .iter()
            .find(|r| r.name == format!("fs2.benchmarks.Benchmarks.{name} [thrpt]"))
            .unwrap()
    };
    let merge2 = verdict("merge2");
    assert_eq!(
        (merge2.verdict, merge2.runs),
        (VerdictKind::Slower, Some([5, 5]))
    );
    assert_eq!(verdict("noopJoinWithEmpty").verdict, VerdictKind::Slower);
    assert!(!matches!(
        verdict("listParJoinUnbounded").verdict,
        VerdictKind::Slower | VerdictKind::Faster
    ));
    assert!(eval.has_regression(FailOn::Regression));
}
