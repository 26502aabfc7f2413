//! `benchgate compare` and `benchgate analyze` as a user runs them: the real binary, real
//! processes, real files.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{self, BIN};

fn benchgate(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run benchgate")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn wall_time(report: &serde_json::Value) -> &serde_json::Value {
    report["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["metric"] == "wall_time")
        .expect("a wall_time row")
}

#[test]
fn compare_finds_a_ten_percent_slower_sleep() {
    let _turn = support::measuring_turn_blocking();
    let out = benchgate(&[
        "compare",
        "--base",
        "sleep 0.02",
        "--head",
        "sleep 0.022",
        // Stops as soon as it decides (about 15 rounds on a quiet machine); a loaded one needs more.
        "--max-rounds",
        "400",
        "--json",
    ]);
    let report = json(&out);
    let row = wall_time(&report);
    assert_eq!(row["verdict"], "slower", "{row}");
    let lo = row["interval_pct"][0].as_f64().unwrap();
    // The worse bound may be unbounded (null in the JSON): when only head ran a process in a
    // slow mode, it adds what such runs can move the mean by, which a few rounds leave open
    // (statistics.md, "One side shows it"). A loaded machine makes such runs; CI met one.
    let hi = row["interval_pct"][1].as_f64().unwrap_or(f64::INFINITY);
    assert!(
        lo < 10.0 && 10.0 < hi,
        "interval [{lo}, {hi}] should contain +10%"
    );
    assert_eq!(out.status.code(), Some(1), "a regression exits 1");
}

#[test]
fn compare_of_a_command_with_itself_claims_nothing() {
    let _turn = support::measuring_turn_blocking();
    // One session may claim a change with probability up to alpha (that is what 0.05 means);
    // a second claim in two more sessions would point at a biased tool (p ≈ 2·alpha²).
    let session = || {
        let out = benchgate(&[
            "compare",
            "--base",
            "sleep 0.02",
            "--head",
            "sleep 0.02",
            "--json",
            "--max-rounds",
            "20",
        ]);
        let report = json(&out);
        let verdict = wall_time(&report)["verdict"].as_str().unwrap().to_string();
        let claimed = ["slower", "faster"].contains(&verdict.as_str());
        if !claimed {
            // 0: not slower; 3: no answer yet within 20 rounds (a loaded machine's spread).
            assert!(
                matches!(out.status.code(), Some(0 | 3)),
                "{verdict}: exit {:?}",
                out.status.code()
            );
        }
        (claimed, verdict)
    };
    let (claimed, verdict) = session();
    if claimed {
        eprintln!("A/A session claimed {verdict}; two more sessions must claim nothing");
        for _ in 0..2 {
            let (again, verdict) = session();
            assert!(!again, "A/A claimed {verdict} twice in three sessions");
        }
    }
}

#[test]
fn compare_resumes_a_recorded_session_and_runs_no_round_for_a_decided_one() {
    let _turn = support::measuring_turn_blocking();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let record = |file: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path(file)).unwrap()).unwrap()
    };
    let session = |base: &str, head: &str, extra: &[&str]| {
        let mut args = vec!["compare", "--base", base, "--head", head, "--json"];
        args.extend_from_slice(extra);
        benchgate(&args)
    };

    let first = session(
        "sleep 0.01",
        "sleep 0.01",
        &["--rounds", "3", "--record", &path("a.json")],
    );
    assert_eq!(wall_time(&json(&first))["n"], 3);
    let more = session(
        "sleep 0.01",
        "sleep 0.01",
        &[
            "--rounds",
            "5",
            "--resume",
            &path("a.json"),
            "--record",
            &path("b.json"),
        ],
    );
    assert_eq!(wall_time(&json(&more))["n"], 5, "3 recorded + 2 new pairs");
    let whole = record("b.json");
    let rounds = whole["rounds"].as_array().unwrap();
    let indices: Vec<u64> = rounds
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [0, 1, 2, 3, 4]);
    // ABBA continues: round 3 runs head first, round 4 base first.
    assert_eq!(rounds[3]["order"][0], "head", "{}", rounds[3]);
    assert_eq!(rounds[4]["order"][0], "base", "{}", rounds[4]);
    assert_eq!(
        rounds[..3],
        record("a.json")["rounds"].as_array().unwrap()[..]
    );
    assert_eq!(whole["resumed_rounds"], 3);

    let other = session("sleep 0.02", "sleep 0.01", &["--resume", &path("a.json")]);
    assert_eq!(other.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        stderr.contains("cannot continue that session: it ran base `sleep 0.01`"),
        "{stderr}"
    );

    // Not a recording, or no file at all: a clear error before anything runs.
    std::fs::write(path("notes.json"), "{\"rounds\": 3}").unwrap();
    for (file, says) in [
        ("notes.json", "is not a `benchgate compare --record` file"),
        ("missing.json", "--resume: cannot read"),
    ] {
        let out = session("sleep 0.01", "sleep 0.01", &["--resume", &path(file)]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{stderr}");
    }

    // A decided session: resuming it measures nothing more and keeps its answer.
    let slow = ["--max-rounds", "400", "--record", &path("slow.json")];
    let decided = session("sleep 0.01", "sleep 0.03", &slow);
    assert_eq!(decided.status.code(), Some(1), "{}", json(&decided));
    let n = record("slow.json")["rounds"].as_array().unwrap().len();
    let again = session(
        "sleep 0.01",
        "sleep 0.03",
        &[
            "--resume",
            &path("slow.json"),
            "--record",
            &path("slow2.json"),
        ],
    );
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(record("slow2.json")["rounds"].as_array().unwrap().len(), n);
    assert_eq!(wall_time(&json(&again))["verdict"], "slower");
}

#[test]
fn compare_reports_a_failing_command_as_a_measurement_error() {
    let out = benchgate(&[
        "compare",
        "--shell",
        "--base",
        "true",
        "--head",
        "echo broken build >&2; exit 3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken build"),
        "stderr tail shown: {stderr}"
    );
}

/// One `raw` file per run, a directory of them per side.
fn raw_runs(dir: &Path, side: &str, values: &[&str]) -> String {
    let d = dir.join(side);
    std::fs::create_dir_all(&d).unwrap();
    for (i, v) in values.iter().enumerate() {
        std::fs::write(d.join(format!("run{i:02}.txt")), format!("{v}\n")).unwrap();
    }
    d.to_string_lossy().into_owned()
}

#[test]
fn analyze_reads_directories_of_runs_and_prints_stable_json() {
    let dir = tempfile::tempdir().unwrap();
    let base = raw_runs(
        dir.path(),
        "base",
        &[
            "102.1", "99.8", "101.5", "100.2", "98.9", "100.7", "101.9", "99.5", "100.4", "100.0",
        ],
    );
    let head = raw_runs(
        dir.path(),
        "head",
        &[
            "110.4", "109.3", "111.1", "110.9", "108.2", "110.5", "112.0", "109.8", "110.2",
        ],
    );
    let out = benchgate(&["analyze", "--json", "--format", "raw", &base, &head]);
    assert_eq!(out.status.code(), Some(1), "a regression exits 1");
    let report = json(&out);
    assert_eq!(report["alpha"], 0.05);
    let row = &report["benchmarks"][0];
    assert_eq!(row["runs"], serde_json::json!([10, 9]));
    assert_eq!(
        (row["n"].clone(), row["verdict"].clone()),
        (9.into(), "slower".into())
    );
    let lo = row["interval_pct"][0].as_f64().unwrap();
    let flo = row["fixed_interval_pct"][0].as_f64().unwrap();
    // Anytime-valid: wider than the fixed-n interval, and both above zero.
    assert!(0.0 < lo && lo < flo, "{row}");
    for key in [
        "name",
        "metric",
        "unit",
        "base_center",
        "head_center",
        "change_pct",
        "verdict",
        "practical",
        "rounds_needed",
        "e_value",
    ] {
        assert!(row.get(key).is_some(), "missing {key} in {row}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("run00.txt: read as raw (as configured), one run"),
        "{stderr}"
    );
}

/// Twenty quiet base runs and one head run 8% slower: the head's spread is unknown, so the row
/// claims nothing and says what would answer it (exit 3); assuming equal spreads says slower.
#[test]
fn analyze_with_one_head_run_claims_nothing_unless_equal_spreads_are_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (0..20)
        .map(|i| format!("{:.1}", 100.0 + f64::from(i % 5) * 0.3))
        .collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    let base = raw_runs(dir.path(), "base", &values);
    let head = raw_runs(dir.path(), "head", &["108.0"]);
    let out = benchgate(&["analyze", "--json", "--format", "raw", &base, &head]);
    assert_eq!(out.status.code(), Some(3), "no answer exits 3");
    let row = &json(&out)["benchmarks"][0];
    assert_eq!(row["runs"], serde_json::json!([20, 1]), "{row}");
    assert_eq!(
        row["interval_pct"],
        serde_json::json!([null, null]),
        "{row}"
    );
    let reason = row["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("one run on the head: its spread is unknown; run it at least once more"),
        "{row}"
    );
    let text = benchgate(&["analyze", "--format", "raw", &base, &head]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("one run on the head"), "{stdout}");

    let assumed = benchgate(&[
        "analyze",
        "--json",
        "--format",
        "raw",
        "--assume-equal-spread",
        &base,
        &head,
    ]);
    assert_eq!(assumed.status.code(), Some(1), "the pooled interval claims");
    assert_eq!(json(&assumed)["benchmarks"][0]["verdict"], "slower");
}

#[test]
fn analyze_names_file_and_line_of_a_bad_value() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.txt");
    let head = dir.path().join("head.txt");
    std::fs::write(&base, "1.0\n2.0\nfast\n").unwrap();
    std::fs::write(&head, "1.0\n2.0\n3.0\n").unwrap();
    let out = benchgate(&[
        "analyze",
        "--format",
        "raw",
        base.to_str().unwrap(),
        head.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("base.txt") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn analyze_rejects_an_empty_file_and_an_unknown_format() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let p = empty.to_str().unwrap();
    let out = benchgate(&["analyze", p, p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));

    let out = benchgate(&["analyze", "--format", "nope", p, p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

/// bent's go files hold one process per repetition: 25 runs a side of each benchmark. The A/A
/// pair (two nights, one toolchain) claims nothing; with rows undecided it exits 3 (no answer yet), never 1.
#[test]
fn analyze_of_two_go_files_reads_their_processes_and_an_a_a_claims_nothing() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/harness/tests/fixtures/aa-ab/go-bent");
    let mut files: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "go-bent fixtures present");
    let out = benchgate(&[
        "analyze",
        "--json",
        "--format",
        "go",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
    ]);
    // Rows still undecided and rows of one run per side: no answer yet, which is no pass.
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runs found: base 966, head 966"),
        "{stderr}"
    );
    let report = json(&out);
    let rows = report["benchmarks"].as_array().unwrap();
    assert!(rows.len() > 200);
    assert!(
        rows.iter()
            .all(|r| r["verdict"] != "slower" && r["verdict"] != "faster"),
        "{report}"
    );
    assert!(
        rows.iter()
            .any(|r| r["runs"] == serde_json::json!([25, 25]))
    );
}

/// A count that grew from 0 to 16 B/op in one `go test -benchmem` process a side is exact; by
/// the usual rules the benchmark gates on its time (one run a side: no answer), so the exit is
/// 0; with the suite's rule `metric = "bytes_per_op"` (`--config`, as `compare --config` and
/// the service read it) the count gates and the exit is 1.
/// A PR body's claims held against real A/B recordings (Go's bent suite, Go 1.17 against tip
/// on one machine and night): each claim gets its word from the row it names.
#[test]
fn analyze_answers_the_claims_of_a_pr_body() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/harness/tests/fixtures/aa-ab/go-bent");
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("pr.md");
    std::fs::write(
        &body,
        "Speeds up the tracker.\n\n\
         - `BenchmarkDataUpdateTracker` is 14% faster\n\
         - `BenchmarkAppendMsgResyncTargetsInfo` is 2x faster\n\
         - `BenchmarkCommitAfterHashFixedSize/10K` is 10% faster\n\
         - `BenchmarkNoSuchThing` is 5% faster\n",
    )
    .unwrap();
    let (base, head) = (
        fixtures.join("Go1.17-opt.20220105T213212.txt"),
        fixtures.join("b5bfaf410a-opt.20220105T213212.txt"),
    );
    let analyze = |extra: &[&str]| {
        let mut args = vec!["analyze", "--format", "go"];
        args.extend_from_slice(extra);
        args.extend([base.to_str().unwrap(), head.to_str().unwrap()]);
        benchgate(&args)
    };
    let out = analyze(&[
        "--claims-from",
        body.to_str().unwrap(),
        "--claim",
        "BenchmarkDataUpdateTracker -30%",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let claims: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Claims"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let word = |name: &str, claimed: &str| {
        claims
            .iter()
            .find(|l| l.contains(name) && l.contains(&format!(" {claimed} claimed: ")))
            .and_then(|l| l.split(" claimed: ").nth(1))
            .map(|rest| rest.split([',', ' ']).take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("{name} {claimed} in {claims:#?}"))
    };
    // Measured −14.4% to −13.7%: 14% is inside, 30% beyond it.
    assert!(
        word("DataUpdateTracker", "-14%").starts_with("confirmed"),
        "{claims:#?}"
    );
    assert!(word("DataUpdateTracker", "-30%").starts_with("smaller than claimed"));
    // −23% to −17% measured: "2x faster" (−50%) is smaller than claimed.
    assert!(word("AppendMsgResyncTargetsInfo", "-50%").starts_with("smaller than claimed"));
    // Measured 9.6% to 17.7% slower.
    assert!(word("CommitAfterHashFixedSize/10K", "-10%").starts_with("opposite"));
    assert!(word("BenchmarkNoSuchThing", "-5.0%").starts_with("not answered"));
    assert_eq!(claims.len(), 5, "{claims:#?}");
    let json = analyze(&["--json", "--claim", "BenchmarkDataUpdateTracker 14% faster"]);
    let report = self::json(&json);
    assert_eq!(
        report["claims"][0]["answer"], "confirmed",
        "{}",
        report["claims"]
    );
    assert_eq!(
        report["claims"][0]["benchmark"],
        "github.com/minio/minio/cmd.BenchmarkDataUpdateTracker-12"
    );
    let bad = benchgate(&["analyze", "--claim", "parse fast", "a", "b"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--claim \"parse fast\""));
}

#[test]
fn analyze_gates_an_exact_count_from_one_process_by_the_suites_rules() {
    let dir = tempfile::tempdir().unwrap();
    let process = |bytes: u64| {
        format!(
            "goos: linux\ngoarch: amd64\npkg: example.com/engine\n\
             BenchmarkUpdateState-12     \t     849\t   1488118 ns/op\t  {bytes} B/op\t    0 allocs/op\n\
             PASS\nok  \texample.com/engine\t11.698s\n"
        )
    };
    let (old, new) = (dir.path().join("old.txt"), dir.path().join("new.txt"));
    std::fs::write(&old, process(0)).unwrap();
    std::fs::write(&new, process(16)).unwrap();
    let config = dir.path().join(".benchgate.toml");
    std::fs::write(
        &config,
        "[benchmark]\nrun = \"go test -bench . -benchmem\"\nformat = \"go\"\n\n\
         [[benchmark.rule]]\nmatch = \"BenchmarkUpdateState*\"\nmetric = \"bytes_per_op\"\n",
    )
    .unwrap();
    let files = [old.to_str().unwrap(), new.to_str().unwrap()];
    let plain = benchgate(&["analyze", "--format", "go", files[0], files[1]]);
    let text = String::from_utf8_lossy(&plain.stdout);
    // Without the suite's rule the count does not gate and the time has one run: no answer.
    assert_eq!(plain.status.code(), Some(3), "{text}");
    assert!(text.contains("0 B → 16 B (exact)"), "{text}");
    let gated = benchgate(&[
        "analyze",
        "--format",
        "go",
        "--config",
        config.to_str().unwrap(),
        files[0],
        files[1],
    ]);
    let text = String::from_utf8_lossy(&gated.stdout);
    assert_eq!(gated.status.code(), Some(1), "{text}");
    assert!(text.contains("slower (exact count)"), "{text}");
}

/// Copies of `target/criterion` from runs of semver 1.0.28's suite at one commit
/// (crates/harness/tests/fixtures/real/criterion-runs/README.md), `first..=last`, as one side.
fn semver_runs(into: &Path, first: usize, last: usize, factor: f64) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/harness/tests/fixtures/real/criterion-runs/semver-1.0.28");
    std::fs::create_dir_all(into).unwrap();
    for i in first..=last {
        let run = format!("run{i:02}");
        for bench in std::fs::read_dir(root.join(&run)).unwrap() {
            let bench = bench.unwrap().path();
            let to = into.join(&run).join(bench.file_name().unwrap()).join("new");
            std::fs::create_dir_all(&to).unwrap();
            for file in ["benchmark.json", "sample.json", "estimates.json"] {
                let text = std::fs::read_to_string(bench.join("new").join(file)).unwrap();
                let text = if file == "sample.json" {
                    scaled_times(&text, factor)
                } else {
                    text
                };
                std::fs::write(to.join(file), text).unwrap();
            }
        }
    }
    into.to_string_lossy().into_owned()
}

/// criterion's `sample.json` with every time multiplied by `factor`.
fn scaled_times(text: &str, factor: f64) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    for t in v["times"].as_array_mut().unwrap() {
        *t = (t.as_f64().unwrap() * factor).into();
    }
    v.to_string()
}

/// The issue's case on a real crate: same-commit criterion runs analysed pairwise claim nothing
/// (one run per side) and exit 3 (no answer); ten runs against ten others of the same commit claim nothing;
/// the twenty with the head's times scaled by 1.25 are slower and exit 1.
#[test]
fn analyze_of_real_same_commit_criterion_runs_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=3 {
        let j = i % 3 + 1;
        let base = semver_runs(&dir.path().join(format!("p{i}")), i, i, 1.0);
        let head = semver_runs(&dir.path().join(format!("q{i}")), j, j, 1.0);
        let out = benchgate(&["analyze", "--json", &base, &head]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "one run a side: no answer, run {i} vs run {j}"
        );
        let report = json(&out);
        let rows = report["benchmarks"].as_array().unwrap();
        assert_eq!(rows.len(), 3, "{report}");
        assert!(
            rows.iter().all(|r| r["verdict"] == "not_analysed"),
            "{report}"
        );
    }
    let base = semver_runs(&dir.path().join("base"), 1, 10, 1.0);
    let aa = semver_runs(&dir.path().join("aa"), 11, 20, 1.0);
    let out = benchgate(&["analyze", "--json", &base, &aa]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Nothing claimed, and not every row decided in ten runs: status 3, never 1.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr
            .matches("read as criterion (auto-detected), one run")
            .count(),
        20,
        "{stderr}"
    );
    let report = json(&out);
    for row in report["benchmarks"].as_array().unwrap() {
        assert_eq!(row["runs"], serde_json::json!([10, 10]), "{row}");
        assert!(
            !["slower", "faster"].contains(&row["verdict"].as_str().unwrap()),
            "{row}"
        );
    }
    // All twenty runs against the same twenty with every time 1.25×: the change is exactly
    // +25%, and twenty runs a side resolve it at this run-to-run spread (27–50 ns for one
    // benchmark; ten a side do not: the interval then reaches below zero).
    let all = semver_runs(&dir.path().join("all"), 1, 20, 1.0);
    let scaled = semver_runs(&dir.path().join("scaled"), 1, 20, 1.25);
    let out = benchgate(&["analyze", "--json", &all, &scaled]);
    assert_eq!(out.status.code(), Some(1));
    for row in json(&out)["benchmarks"].as_array().unwrap() {
        assert_eq!(row["verdict"], "slower", "{row}");
        let [lo, hi] = [0, 1].map(|k| row["interval_pct"][k].as_f64().unwrap());
        assert!(lo < 25.0 && 25.0 < hi, "{row}");
        assert!(
            (row["change_pct"].as_f64().unwrap() - 25.0).abs() < 1e-6,
            "{row}"
        );
    }
}

/// A criterion `target/criterion` directory is one run: analysed as it is, it says how it read
/// each side and that one run per side holds no interval.
#[test]
fn analyze_reads_criterion_directories() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/harness/tests/fixtures/bench/criterion/deduplicate");
    let out = Command::new(BIN)
        .arg("analyze")
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "one run per side answers nothing: {stderr}"
    );
    assert!(
        stderr.contains("read as criterion (auto-detected), one run"),
        "{stderr}"
    );
    assert!(
        stdout.contains("get/moka get/1024 time         1+1")
            && stdout.contains("one run per side"),
        "{stdout}"
    );
}

/// A repository whose suite prints two libtest rows with modelled times (`benchgate spin`):
/// `fast` is 1.3× slower in head with 1% spread, `noisy` unchanged with 50% spread.
fn suite_repository(dir: &Path) {
    let bench = |fast: u64| {
        format!(
            "\"$BG\" spin --iterations {fast} --modelled-spread 0.01 | sed 's/test spin/test fast/'\n\
             \"$BG\" spin --iterations 100000 --modelled-spread 0.5 | sed 's/test spin/test noisy/'\n"
        )
    };
    let git = |args: &[&str]| support::git(dir, args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        dir.join(".benchgate.toml"),
        "[benchmark]\nbuild = \"cp bench.sh run.sh\"\nrun = \"sh run.sh\"\nformat = \"libtest\"\n\
         warmup = 1\n\n[[benchmark.rule]]\nmatch = \"noisy\"\ngate = false\n\n\
         [gate]\nmin_effect = \"3%\"\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "run.sh\n").unwrap();
    std::fs::write(dir.join("bench.sh"), bench(200_000)).unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base"]);
    std::fs::write(dir.join("bench.sh"), bench(260_000)).unwrap();
    git(&["commit", "--quiet", "-am", "head: fast does 30% more work"]);
}

/// Adds `line` to the suite's `[benchmark]` of `suite_repository` (uncommitted).
fn with_suite_key(dir: &Path, line: &str) {
    let config = dir.join(".benchgate.toml");
    let text = std::fs::read_to_string(&config).unwrap().replacen(
        "warmup = 1\n",
        &format!("warmup = 1\n{line}\n"),
        1,
    );
    std::fs::write(&config, text).unwrap();
}

/// `compare --config` of `suite_repository` from `base` to `main`, two rounds at most.
fn suite_compare(dir: &Path, base: &str, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(["compare", "--config"])
        .arg(dir.join(".benchgate.toml"))
        .args(["--repo", dir.to_str().unwrap()])
        .args(["--base-rev", base, "--head-rev", "main"])
        .args(["--env", &format!("BG={BIN}"), "--max-rounds", "2"])
        .args(extra)
        .output()
        .unwrap()
}

/// `compare --config` runs the suite as the service would: its build, run, format, rules and
/// gate. The noisy row is not gated by its rule, so the session stops when `fast` decides, long
/// before the cap; `--until noisy` waits for the noisy row instead; off a terminal, progress is
/// plain lines with the elapsed time.
#[test]
fn compare_runs_the_repository_config_as_ci_and_stops_when_the_gated_rows_decide() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    suite_repository(repo.path());
    let config = repo.path().join(".benchgate.toml");
    let run = |extra: &[&str]| {
        let out = Command::new(BIN)
            .args(["compare", "--config", config.to_str().unwrap()])
            .args(["--repo", repo.path().to_str().unwrap()])
            .args(["--base-rev", "main~1", "--head-rev", "main"])
            .args(["--env", &format!("BG={BIN}")])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out, stderr)
    };
    let (out, stderr) = run(&["--max-rounds", "40"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a gated regression exits 1: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("suite: [benchmark] from --config")
            && stdout.contains("Margin M = ±3.0%")
            && stdout.contains("every gated benchmark decided"),
        "{stdout}"
    );
    let fast = stdout.lines().find(|l| l.starts_with("fast time")).unwrap();
    assert!(fast.contains("slower (beyond ±3.0%)"), "{stdout}");
    let noisy = stdout
        .lines()
        .find(|l| l.starts_with("noisy time"))
        .unwrap();
    assert!(noisy.contains("(not gated)"), "{stdout}");
    let rounds: usize = stdout
        .lines()
        .find_map(|l| l.split(" rounds in ").next()?.parse().ok())
        .expect("the rounds line");
    assert!(rounds < 40, "stopped at the cap: {stdout}");
    assert!(
        stderr.contains("benchgate: building base ") && stderr.contains("benchgate: round 1/40, "),
        "plain progress lines off a terminal: {stderr}"
    );

    let (out, stderr) = run(&["--until", "noisy", "--max-rounds", "4"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("4 rounds in ") && stdout.contains("(round limit reached)"),
        "--until waits for the named row: {stdout}{stderr}"
    );

    let (out, stderr) = run(&["--until", "nothing*"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("--until nothing* matches no benchmark; they are: fast, noisy"),
        "{stderr}"
    );
    let (out, stderr) = run(&["--suite", "missing"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("no suite `missing`; the file has default"),
        "{stderr}"
    );
}

/// `compare --config` with the suite's `ignore`: a commit of docs alone answers at once, exit 0,
/// without building or running anything; one that also touches the benchmark is measured.
#[test]
fn compare_skips_a_change_whose_files_the_suite_ignores() {
    let repo = tempfile::tempdir().unwrap();
    suite_repository(repo.path());
    let git = |args: &[&str]| support::git(repo.path(), args);
    with_suite_key(repo.path(), "ignore = [\"**/*.md\", \"docs/**\"]");
    git(&["commit", "--quiet", "-am", "ignore docs"]);
    std::fs::create_dir_all(repo.path().join("docs")).unwrap();
    std::fs::write(repo.path().join("README.md"), "# suite\n").unwrap();
    std::fs::write(repo.path().join("docs/guide.txt"), "how to\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "docs only"]);
    let run = |base: &str, extra: &[&str]| suite_compare(repo.path(), base, extra);
    let out = run("main~1", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("no benchmarked file changed between base ")
            && stdout.contains(
                ": all 2 files changed match the suite's ignore (**/*.md, docs/**); nothing was run"
            ),
        "{stdout}"
    );
    assert!(
        !repo.path().join(".git/benchgate-worktrees").exists(),
        "nothing checked out or built"
    );
    let out = run("main~1", &["--json"]);
    let report = json(&out);
    assert_eq!(report["skipped"], "no benchmarked file changed", "{report}");
    assert_eq!(
        report["change"]["files"],
        serde_json::json!(["README.md", "docs/guide.txt"])
    );
    // Three commits back: the benchmark's own change is in the range, so it is measured.
    let out = run("main~3", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("fast time"), "measured: {stdout}");
}

/// `compare --config` with the suite's `artifacts`: a commit that changes source but builds to
/// the same bytes concludes "identical build", exit 0, without a round; one whose build differs
/// is measured, and stderr says how many artifacts differ.
#[test]
fn compare_concludes_identical_build_without_measuring() {
    let repo = tempfile::tempdir().unwrap();
    suite_repository(repo.path());
    let git = |args: &[&str]| support::git(repo.path(), args);
    with_suite_key(repo.path(), "artifacts = [\"run.sh\"]");
    git(&["commit", "--quiet", "-am", "name the build's output"]);
    // Source that the build does not read: the output is the same.
    std::fs::write(repo.path().join("notes.txt"), "a comment\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "a note"]);
    let run = |base: &str, extra: &[&str]| suite_compare(repo.path(), base, extra);
    let out = run("main~1", &["--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["skipped"], "identical build", "{report}");
    assert_eq!(
        report["change"]["build"]["files"],
        serde_json::json!(["run.sh"])
    );
    let out = run("main~1", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(": identical build: run.sh (0.0 MiB) byte-identical on both sides"),
        "{stdout}"
    );
    // The benchmark's own change is in this range: run.sh differs, so the sides are measured.
    let out = run("main~3", &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("fast time"), "measured: {stdout}");
    assert!(
        stderr.contains("artifacts: 1 of 1 artifact files differ between the sides; measuring"),
        "{stderr}"
    );
}

/// An A/A of one commit (`--base-rev main --head-rev main`) builds it once and runs that build
/// on both sides, as a runner's calibration does: no second worktree, and no "identical build"
/// skip even where the suite names artifacts (both sides are one build by design).
#[test]
fn compare_of_a_commit_against_itself_builds_once_and_measures() {
    let repo = tempfile::tempdir().unwrap();
    suite_repository(repo.path());
    with_suite_key(repo.path(), "artifacts = [\"run.sh\"]");
    support::git(
        repo.path(),
        &["commit", "--quiet", "-am", "name the build's output"],
    );
    let out = suite_compare(repo.path(), "main", &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("fast time"), "measured: {stdout}\n{stderr}");
    assert_eq!(stderr.matches("building ").count(), 1, "{stderr}");
    assert!(stderr.contains("both sides run one build"), "{stderr}");
    assert!(!repo.path().join(".git/benchgate-worktrees/head").exists());
}

/// A suite whose run command holds `{measure_secs}`: each run receives the suite's `measure`
/// (or `--measure-secs`) as seconds, and with criterion's bounds the report says which run
/// length would answer soonest on this machine.
#[test]
fn compare_puts_the_run_length_in_the_command_and_says_which_answers_soonest() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| support::git(repo.path(), args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        repo.path().join(".benchgate.toml"),
        "[benchmark]\nrun = \"sh bench.sh {measure_secs}\"\nformat = \"criterion\"\n\
         warmup = 0\nmeasure = \"20ms\"\n",
    )
    .unwrap();
    // Criterion's output: a value that moves ±5% from run to run (what a longer run cannot
    // shrink) with its own bounds ±0.5% (what it can), after a fixed 50 ms of start-up.
    std::fs::write(
        repo.path().join("bench.sh"),
        "echo \"$1\" >> \"$MEASURES\"\nsleep 0.05\n\
         awk -v seed=$$ 'BEGIN { srand(seed); v = 1 + (rand() - 0.5) * 0.1; \
         printf \"parse                   time:   [%.4f ms %.4f ms %.4f ms]\\n\", v * 0.995, v, v * 1.005 }'\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base"]);
    std::fs::write(repo.path().join("NOTES.txt"), "x\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "head"]);
    let measures = repo.path().join("measures.log");
    let config = repo.path().join(".benchgate.toml");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["compare", "--config", config.to_str().unwrap()])
            .args(["--repo", repo.path().to_str().unwrap()])
            .args([
                "--base-rev",
                "main~1",
                "--head-rev",
                "main",
                "--rounds",
                "8",
            ])
            .args(["--env", &format!("MEASURES={}", measures.display())])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let logged = std::fs::read_to_string(&measures).unwrap();
    assert!(
        !logged.is_empty() && logged.lines().all(|l| l == "0.02"),
        "{logged}"
    );
    assert!(
        stdout.contains("the run length that answers soonest here is ~")
            && stdout.contains("(now 0.02 s: `measure` in the suite, or --measure-secs)"),
        "{stdout}"
    );
    std::fs::remove_file(&measures).unwrap();
    run(&["--measure-secs", "250ms"]);
    let logged = std::fs::read_to_string(&measures).unwrap();
    assert!(logged.lines().all(|l| l == "0.25"), "{logged}");
}

/// A run command whose warm-up per benchmark is longer than its measuring (the script sleeps
/// for its `--warm-up-time` before "measuring" `{measure_secs}`): the advice counts the
/// warm-up, names the flag as written, and says what the harness takes (the worktree's
/// Cargo.lock names criterion 0.3.6: whole seconds).
#[test]
fn compare_counts_the_run_command_s_warm_up_in_its_run_length_advice() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| support::git(repo.path(), args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        repo.path().join(".benchgate.toml"),
        "[benchmark]\nrun = \"sh bench.sh --warm-up-time 0.2 --measurement-time {measure_secs}\"\n\
         format = \"criterion\"\nwarmup = 0\nmeasure = \"20ms\"\n",
    )
    .unwrap();
    // Criterion's output after its warm-up and 50 ms of start-up: a value that moves ±5% from
    // run to run with its own bounds ±0.5%.
    std::fs::write(
        repo.path().join("bench.sh"),
        "sleep \"$2\"\nsleep 0.05\n\
         awk -v seed=$$ 'BEGIN { srand(seed); v = 1 + (rand() - 0.5) * 0.1; \
         printf \"parse                   time:   [%.4f ms %.4f ms %.4f ms]\\n\", v * 0.995, v, v * 1.005 }'\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("Cargo.lock"),
        "version = 3\n\n[[package]]\nname = \"criterion\"\nversion = \"0.3.6\"\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base"]);
    std::fs::write(repo.path().join("NOTES.txt"), "x\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "head"]);
    let config = repo.path().join(".benchgate.toml");
    let out = Command::new(BIN)
        .args(["compare", "--config", config.to_str().unwrap()])
        .args(["--repo", repo.path().to_str().unwrap()])
        .args([
            "--base-rev",
            "main~1",
            "--head-rev",
            "main",
            "--rounds",
            "8",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "each run spends 0.2 s warming up 1 benchmark against 0.02 s measuring \
             (`--warm-up-time 0.2`)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("criterion 0.3.6 (Cargo.lock) takes whole seconds")
            || stdout.contains("a shorter warm-up (`--warm-up-time"),
        "{stdout}"
    );
}

/// A gated row too noisy to decide: `--budget` ends the session with what is known, exit 3
/// (no answer yet), and the report says what an answer still needs in rounds and time.
#[test]
fn compare_stops_at_its_time_budget_and_says_what_an_answer_needs() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| support::git(repo.path(), args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    let config = repo.path().join(".benchgate.toml");
    // Rounds of about two seconds, so ten seconds hold a handful: 5% spread stays undecided.
    std::fs::write(
        &config,
        "[benchmark]\nrun = \"sleep 1; $BG spin --iterations 100000 --modelled-spread 0.05\"\n\
         format = \"libtest\"\nwarmup = 0\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base"]);
    git(&["commit", "--quiet", "--allow-empty", "-m", "head"]);
    let out = Command::new(BIN)
        .args(["compare", "--config", config.to_str().unwrap()])
        .args(["--repo", repo.path().to_str().unwrap()])
        .args(["--base-rev", "main~1", "--head-rev", "main"])
        .args(["--env", &format!("BG={BIN}")])
        .args(["--max-rounds", "100000", "--budget", "10s"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("(time budget spent)"), "{stdout}");
    let forecast = stdout
        .lines()
        .find(|l| l.starts_with("an answer needs ~"))
        .unwrap_or_else(|| panic!("a forecast line: {stdout}"));
    assert!(forecast.contains(" a round (--max-rounds"), "{forecast}");
    let bad = Command::new(BIN)
        .args([
            "compare",
            "--base",
            "true",
            "--head",
            "true",
            "--budget",
            "2 fortnights",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("is not a duration such as"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// `{benchmarks}` in the run command: rounds after a row decides run only the undecided ones
/// (a regular expression of their names, shell-quoted), and the decided row keeps its pairs.
#[test]
fn compare_runs_only_the_undecided_benchmarks_through_the_placeholder() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| support::git(repo.path(), args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    let script = |fast: u64| {
        format!(
            "echo \"$1\" >> \"$LOG\"\n\
             if echo fast | grep -Eq -- \"$1\"; then \"$BG\" spin --iterations {fast} \
             --modelled-spread 0.01 | sed 's/test spin/test fast/'; fi\n\
             if echo steady | grep -Eq -- \"$1\"; then \"$BG\" spin --iterations 100000 \
             --modelled-spread 0.05 | sed 's/test spin/test steady/'; fi\n"
        )
    };
    let config = repo.path().join(".benchgate.toml");
    std::fs::write(
        &config,
        "[benchmark]\nrun = \"sh run.sh {benchmarks}\"\nformat = \"libtest\"\nwarmup = 0\n\
         rounds = 60\n",
    )
    .unwrap();
    std::fs::write(repo.path().join("run.sh"), script(100_000)).unwrap();
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base"]);
    std::fs::write(repo.path().join("run.sh"), script(50_000)).unwrap();
    git(&["commit", "--quiet", "-am", "head: fast does half the work"]);
    let log = repo.path().join("filters.log");
    let out = Command::new(BIN)
        .args(["compare", "--config", config.to_str().unwrap(), "--json"])
        .args(["--repo", repo.path().to_str().unwrap()])
        .args(["--base-rev", "main~1", "--head-rev", "main"])
        .args(["--env", &format!("BG={BIN}")])
        .args(["--env", &format!("LOG={}", log.display())])
        .output()
        .unwrap();
    let report = json(&out);
    let pairs = |name: &str| {
        report["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {report}"))["n"]
            .as_u64()
            .unwrap()
    };
    let filters = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = filters.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"."),
        "every benchmark at first: {filters}"
    );
    assert!(
        lines.contains(&"^(steady)$"),
        "then only the undecided row: {filters}\n{report}"
    );
    assert!(
        pairs("fast") < pairs("steady"),
        "the decided row kept its pairs and ran no more: {report}"
    );
    assert_eq!(
        lines.len() as u64,
        2 * pairs("steady"),
        "one run per side per round: {filters}"
    );
}

/// A benchmark program whose runs print fixed criterion lines: the k-th run of a side reads a
/// counter kept in `DIR`, so every session measures the same values and reads the same.
fn scripted_criterion(dir: &Path) -> String {
    let script = dir.join("bench.sh");
    std::fs::write(
        &script,
        r#"f="$DIR/$1.count"; k=$(cat "$f" 2>/dev/null || echo 0); echo $((k + 1)) > "$f"
w=$(( (k * 7) % 5 ))
if [ "$1" = base ]; then parse=$((100 + w)); else parse=$((130 + w)); fi
emit=$((2000 + 10 * w)); [ "$1" = head ] && emit=$((2040 - 10 * w))
echo "parse                   time:   [$((parse - 1)).0 ns $parse.0 ns $((parse + 1)).0 ns]"
echo "emit                    time:   [$((emit - 5)).0 ns $emit.0 ns $((emit + 5)).0 ns]"
echo "                        thrpt:  [$((1000000 / emit)) Melem/s $((1000000 / emit)) Melem/s $((1000000 / emit)) Melem/s]"
"#,
    )
    .unwrap();
    script.to_str().unwrap().to_owned()
}

/// Checks snapshots with the times, the machine and the temporary directory redacted: the
/// words of a scripted session vary in nothing else.
fn redacted<F: FnOnce()>(dir: &Path, check: F) {
    let dir = regex_escape(dir.to_str().unwrap());
    insta::with_settings!({filters => vec![
        (dir.as_str(), "[dir]"),
        (r"\b\d+\.\d s\b|\b\d+ min \d\d s\b", "[time]"),
        (r"(?m)^machine: .*$", "machine: [machine]"),
        (r"(?m)[ \t]+$", ""),
    ]}, {
        check();
    });
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// `compare` as a user reads it in a CI log (stderr not a terminal): a plain line per phase
/// and the rounds with the time; then the report, benchmarks counted once each.
#[test]
fn compare_output_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let script = scripted_criterion(dir.path());
    let out = Command::new(BIN)
        .args([
            "compare",
            "--shell",
            "--format",
            "criterion",
            "--rounds",
            "8",
        ])
        .args(["--base", &format!("sh {script} base")])
        .args(["--head", &format!("sh {script} head")])
        .args(["--env", &format!("DIR={}", dir.path().display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "parse is slower");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    redacted(dir.path(), || {
        insta::assert_snapshot!("compare_off_a_terminal_stdout", stdout);
        insta::assert_snapshot!("compare_off_a_terminal_stderr", stderr);
    });
}

/// The same session on a terminal (`script` gives it one): the bar is drawn on stderr and
/// cleared, so the screen ends with the report alone.
#[test]
fn compare_output_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let script = scripted_criterion(dir.path());
    let command = format!(
        "{BIN} compare --shell --format criterion --rounds 8 --base 'sh {script} base' \
         --head 'sh {script} head' --env DIR={}",
        dir.path().display()
    );
    let out = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .env("COLUMNS", "120")
        .env("LINES", "50")
        .output()
        .expect("script(1) from util-linux");
    let mut screen = vt100::Parser::new(50, 120, 0);
    screen.process(&out.stdout);
    let contents = screen.screen().contents();
    assert!(
        !contents.contains("rounds ["),
        "no bar is left behind:\n{contents}"
    );
    redacted(dir.path(), || {
        insta::assert_snapshot!("compare_on_a_terminal_screen", contents.trim_end());
    });
}

/// A small real crate with a criterion bench, in a git repository: the base sums squares in
/// a loop, the head in closed form and adds a benchmark of a larger input (the PR that adds a
/// benchmark with the optimisation it measures). `noisy` does one, two or three times the work
/// by process, as a noisy neighbour would make it, and is not gated. Its dependencies are the
/// workspace's own (Cargo.lock), so the build is offline.
fn criterion_crate(dir: &Path) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        r#"[package]
name = "sumsq"
version = "0.1.0"
edition = "2021"

[dev-dependencies]
criterion = { version = "0.8.2", default-features = false, features = ["cargo_bench_support"] }

[[bench]]
name = "suite"
harness = false

# criterion's own code is not what is measured: unoptimised, it builds in half the time.
[profile.bench.package."*"]
opt-level = 0
"#,
    );
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    write(".gitignore", "target\n");
    let lib = |body: &str| {
        format!(
            "/// The sum of i² for i < n.\npub fn sum_squares(n: u64) -> u64 {{\n    {body}\n}}\n"
        )
    };
    write(
        "src/lib.rs",
        &lib("(0..n).map(|i| std::hint::black_box(i * i)).sum()"),
    );
    let bench = |extra: &str| {
        format!(
            r#"use criterion::{{criterion_group, criterion_main, Criterion}};
use std::hint::black_box;

fn benches(c: &mut Criterion) {{
    c.bench_function("sum_squares/1000", |b| b.iter(|| sumsq::sum_squares(black_box(1000))));
    c.bench_function("noisy", |b| {{
        let reps = 200 * (1 + u64::from(std::process::id()) % 3);
        b.iter(|| (0..reps).fold(0u64, |a, i| a ^ black_box(i)))
    }});{extra}
}}

criterion_group!(suite, benches);
criterion_main!(suite);
"#
        )
    };
    write("benches/suite.rs", &bench(""));
    // Trims the copied lock file to this crate's dependencies. Not offline: it resolves every
    // platform's packages, and a fresh machine's cache holds only those the workspace built.
    let metadata = Command::new("cargo")
        .args(["metadata", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        metadata.status.success(),
        "{}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let git = |args: &[&str]| support::git(dir, args);
    git(&["init", "--quiet", "--initial-branch=main"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "base: a loop"]);
    write(
        "src/lib.rs",
        &lib("n.saturating_sub(1) * n * (2 * n).saturating_sub(1) / 6"),
    );
    write(
        "benches/suite.rs",
        &bench(
            r#"
    c.bench_function("sum_squares/100000", |b| b.iter(|| sumsq::sum_squares(black_box(100_000))));"#,
        ),
    );
    git(&[
        "commit",
        "--quiet",
        "-am",
        "head: closed form, and a benchmark of a large n",
    ]);
}

/// The `.benchgate.toml` of the crate, with `extra` lines in `[benchmark]`.
fn criterion_config(dir: &Path, name: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "[benchmark]\nbuild = \"cargo bench --offline --no-run\"\n\
             run = \"cargo bench --offline -q --bench suite -- --warm-up-time 0.05 \
             --measurement-time 0.2 --sample-size 10 --nresamples 1000\"\n\
             format = \"criterion\"\npaths = [\"benches/**\"]\n{extra}\n\
             [[benchmark.rule]]\nmatch = \"noisy\"\ngate = false\n"
        ),
    )
    .unwrap();
    path
}

/// A real crate's criterion suite run by `compare --config` as CI runs it: both sides built in
/// their worktrees, the session stops when the gated row decides (the noisy ungated row would
/// take far longer), and the benchmark the head adds is "only in head" until the suite says
/// `bench_from_head`, when the base runs head's bench file against its own library.
#[test]
fn a_real_crates_criterion_suite_runs_as_in_ci_and_compares_a_benchmark_added_in_head() {
    let _turn = support::measuring_turn_blocking();
    let repo = tempfile::tempdir().unwrap();
    criterion_crate(repo.path());
    let configs = tempfile::tempdir().unwrap();
    let run = |config: &Path| {
        let out = Command::new(BIN)
            .args(["compare", "--config", config.to_str().unwrap()])
            .args(["--repo", repo.path().to_str().unwrap()])
            .args([
                "--base-rev",
                "main~1",
                "--head-rev",
                "main",
                "--max-rounds",
                "30",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "faster is no regression:\n{stdout}{stderr}"
        );
        let rounds: usize = stdout
            .lines()
            .find_map(|l| l.split(" rounds in ").next()?.parse().ok())
            .expect("the rounds line");
        (stdout, rounds)
    };
    let row = |stdout: &str, name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{stdout}"))
            .to_owned()
    };
    let faster = "faster (beyond ±1.0%)";

    let plain = criterion_config(configs.path(), "plain.toml", "");
    let (stdout, rounds) = run(&plain);
    assert!(
        row(&stdout, "sum_squares/1000 time").contains(faster),
        "{stdout}"
    );
    assert!(
        row(&stdout, "noisy time").contains("(not gated)"),
        "{stdout}"
    );
    assert!(
        row(&stdout, "sum_squares/100000 time").contains("only in head (new)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("every gated benchmark decided") && rounds < 30,
        "stops when the gated row decides, not at the cap: {stdout}"
    );

    let from_head = criterion_config(
        configs.path(),
        "from-head.toml",
        "bench_from_head = [\"benches/**\"]",
    );
    let (stdout, rounds) = run(&from_head);
    assert!(
        row(&stdout, "sum_squares/100000 time").contains(faster),
        "{stdout}"
    );
    assert!(
        stdout.contains("benchmark code from head on both sides (benches/**): 1 file"),
        "{stdout}"
    );
    assert!(rounds < 30, "{stdout}");
    // The base's worktree is itself again for the next session.
    let base = repo.path().join(".git/benchgate-worktrees/base");
    assert!(
        support::git(&base, &["status", "--porcelain", "--untracked-files=no"])
            .contains("benches/suite.rs"),
        "head's bench file is in the base worktree until the next checkout"
    );
}
