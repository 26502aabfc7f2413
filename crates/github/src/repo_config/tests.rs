use super::*;

/// The example from DESIGN.md "Configuration", verbatim.
const DESIGN_EXAMPLE: &str = r#"[benchmark]
build = "cargo build --release"
run = "./target/release/bench-suite"
format = "criterion"          # or libtest, go, hyperfine, google, pytest, catch2, dotnet, jmh, bmf, divan, pyperf, gungraun, raw, auto, command
rounds = 10                   # per comparison; /rebench adds more
warmup = 1
runner = "linux-x86-quiet"    # runner label
paths = ["benches/**"]        # a PR touching these changes the benchmark itself

[gate]
fail_on = "regression"        # or "practical-regression", or "never"
min_effect = "1%"             # policy floor for M
"#;

#[test]
fn the_design_example_parses() {
    let c = parse_repo_config(DESIGN_EXAMPLE).unwrap();
    assert_eq!(c.suites[0].build.as_deref(), Some("cargo build --release"));
    assert_eq!(c.suites[0].run.as_str(), "./target/release/bench-suite");
    assert_eq!(c.suites[0].format, BenchFormat::Criterion);
    assert_eq!(c.suites[0].rounds.get(), 10);
    assert_eq!(c.suites[0].warmup, 1);
    assert_eq!(
        c.suites[0].runner.iter().collect::<Vec<_>>(),
        ["linux-x86-quiet"]
    );
    assert_eq!(c.suites[0].paths.patterns(), ["benches/**"]);
    assert_eq!(c.gate.fail_on, FailOn::Regression);
    assert!((c.gate.min_effect.fraction() - 0.01).abs() < 1e-12);
    assert_eq!(c.suites[0].name(), "default");
    assert!(c.is_single_comparison());
}

/// Two suites, one on two labels, with rules: the monorepo case of the issue; `benchgate config
/// check` prints the same file in tests/config_check.rs.
const SUITES: &str = include_str!("../../../../tests/fixtures/config/monorepo.toml");

#[test]
fn suites_list_their_labels_and_rules_in_file_order() {
    let c = parse_repo_config(SUITES).unwrap();
    let pairs: Vec<_> = c.comparisons().map(|(s, l)| (s.name(), l)).collect();
    assert_eq!(
        pairs,
        [
            ("parser", "linux-x86"),
            ("parser", "linux-arm64"),
            ("vm", "linux-x86")
        ]
    );
    assert!(!c.is_single_comparison());
    let parser = &c.suites[0];
    let rules: Vec<_> = parser.rule.iter().map(RuleConfig::to_wire).collect();
    assert_eq!(rules[0].pattern, "parse_*");
    assert!(!rules[0].gate && !rules[0].ignore);
    assert!(rules[1].ignore);
    assert_eq!(rules[2].min_effect, Some(0.02));
    assert_eq!(rules[2].fail_on, Some(FailOn::Regression));
    let vm = &c.suites[1];
    assert_eq!((vm.rounds.get(), vm.warmup), (4, 0));
    assert_eq!(
        vm.rule[0].metric.as_ref().map(NonEmpty::as_str),
        Some("instructions")
    );
}

#[test]
fn a_lone_benchmark_may_list_labels_and_rules() {
    let text = "[benchmark]\nrun = \"x\"\nrunner = [\"a\", \"b\"]\n[[benchmark.rule]]\nmatch = \"slow\"\ngate = false\n";
    let c = parse_repo_config(text).unwrap();
    assert_eq!(c.comparisons().count(), 2);
    assert!(!c.is_single_comparison());
    assert_eq!(c.suites[0].rule.len(), 1);
}

#[test]
fn suite_and_rule_errors_are_exact() {
    let one = |extra: &str| format!("[[suite]]\nname = \"a\"\nrun = \"x\"\n{extra}");
    let table: Vec<(String, &str)> = vec![
        (
            "[benchmark]\nrun = \"x\"\n[[suite]]\nname = \"a\"\nrun = \"y\"\n".into(),
            ".benchgate.toml:3:1: `suite`: use either one `[benchmark]` or `[[suite]]` entries, not both",
        ),
        (
            "[[suite]]\nrun = \"x\"\n".into(),
            ".benchgate.toml:1:1: `suite[0]`: missing field `name`: every `[[suite]]` needs a unique name",
        ),
        (
            format!("{}[[suite]]\nname = \"a\"\nrun = \"y\"\n", one("")),
            ".benchgate.toml:5:1: `suite[1].name`: suite name `a` is used twice; suite names must be unique",
        ),
        (
            "[[suite]]\nname = \"a b\"\nrun = \"x\"\n".into(),
            ".benchgate.toml:2:8: `suite[0].name`: a suite name uses letters, digits, `-`, `_` and `.` only, got \"a b\"",
        ),
        (
            one("runner = []\n"),
            ".benchgate.toml:4:10: `suite[0].runner`: list at least one runner label",
        ),
        (
            one("runner = [\"a\", \"a\"]\n"),
            ".benchgate.toml:4:10: `suite[0].runner`: runner label \"a\" is listed twice",
        ),
        (
            one("runner = 3\n"),
            ".benchgate.toml:4:10: `suite[0].runner`: expected a runner label such as \"linux-x86\" or a list of labels",
        ),
        (
            one("[[suite.rule]]\nmatch = \"parse_[\"\n"),
            ".benchgate.toml:5:9: `suite[0].rule[0].match`: invalid glob \"parse_[\": unclosed character class; missing ']'",
        ),
        (
            one("[[suite.rule]]\nmatch = \"a\"\ngated = false\n"),
            ".benchgate.toml:6:1: `suite[0].rule[0].gated`: unknown field `gated`, expected one of `match`, `min_effect`, `fail_on`, `gate`, `ignore`, `metric`",
        ),
        (
            one("[[suite.rule]]\ngate = false\n"),
            ".benchgate.toml:4:1: `suite[0].rule[0]`: missing field `match`",
        ),
        (
            one("[[suite.rule]]\nmatch = \"a\"\nfail_on = \"slower\"\n"),
            ".benchgate.toml:6:11: `suite[0].rule[0].fail_on`: unknown variant `slower`, expected one of `regression`, `practical-regression`, `never`",
        ),
        (
            one("[[suite.rule]]\nmatch = \"a\"\nignore = true\nmin_effect = \"2%\"\n"),
            ".benchgate.toml:7:1: `suite[0].rule[0].min_effect`: an ignored benchmark is never analysed, so `min_effect` has no effect; remove `min_effect` or `ignore`",
        ),
        (
            one("[[suite.rule]]\nmatch = \"a\"\n[[suite.rule]]\nmatch = \"b\"\nignore = true\ngate = false\n"),
            ".benchgate.toml:9:1: `suite[0].rule[1].gate`: an ignored benchmark is never analysed, so `gate` has no effect; remove `gate` or `ignore`",
        ),
        (
            one("rounds = 3\nwarmup = 3\n"),
            ".benchgate.toml:5:1: `suite[0].warmup`: warmup (3) must be smaller than rounds (3), or no round would count",
        ),
        (
            "[[suite]]\nname = \"a\"\nrun = \"x\"\n[[suite]]\nname = \"b\"\nrun = \"y\"\nrounds = 2\nwarmup = 2\n".into(),
            ".benchgate.toml:8:1: `suite[1].warmup`: warmup (2) must be smaller than rounds (2), or no round would count",
        ),
    ];
    for (text, want) in &table {
        let err = parse_repo_config(text).expect_err(text);
        assert_eq!(err.to_string(), *want, "{text}");
    }
}

#[test]
fn only_run_is_required() {
    let c = parse_repo_config("[benchmark]\nrun = \"make bench\"\n").unwrap();
    assert_eq!(c.suites[0].build, None);
    assert_eq!(c.suites[0].format, BenchFormat::Command);
    assert_eq!(c.suites[0].rounds.get(), 10);
    assert_eq!(c.suites[0].warmup, 1);
    assert_eq!(c.suites[0].runner.iter().collect::<Vec<_>>(), ["default"]);
    assert!(c.suites[0].paths.patterns().is_empty());
    assert_eq!(c.gate, GateConfig::default());
}

#[test]
fn every_value_form_parses() {
    let table: &[(&str, FailOn, f64)] = &[
        (
            "fail_on = \"practical-regression\"\nmin_effect = \"0.5%\"",
            FailOn::PracticalRegression,
            0.005,
        ),
        (
            "fail_on = \"never\"\nmin_effect = \" 2 % \"",
            FailOn::Never,
            0.02,
        ),
        ("min_effect = \"0%\"", FailOn::Regression, 0.0),
    ];
    for (gate, fail_on, fraction) in table {
        let text = format!("[benchmark]\nrun = \"x\"\n[gate]\n{gate}\n");
        let c = parse_repo_config(&text).unwrap_or_else(|e| panic!("{gate}: {e}"));
        assert_eq!(c.gate.fail_on, *fail_on, "{gate}");
        assert!(
            (c.gate.min_effect.fraction() - fraction).abs() < 1e-12,
            "{gate}"
        );
    }
}

#[test]
fn invalid_configs_name_line_column_and_field() {
    /// (file, line, column, field, words the message must contain)
    type Row = (
        &'static str,
        usize,
        usize,
        Option<&'static str>,
        &'static [&'static str],
    );
    let table: &[Row] = &[
        (
            "[benchmark]\nrun = \"x\"\nrounds = 0\n",
            3,
            10,
            Some("benchmark.rounds"),
            &["between 2 and 200", "got 0"],
        ),
        (
            "[benchmark]\nrun = \"x\"\nrounds = 1000\n",
            3,
            10,
            Some("benchmark.rounds"),
            &["between 2 and 200"],
        ),
        (
            "[benchmark]\nrun = \"x\"\nrounds = \"ten\"\n",
            3,
            10,
            Some("benchmark.rounds"),
            &["invalid type"],
        ),
        (
            "[benchmark]\nrun = \"x\"\nround = 5\n",
            3,
            1,
            Some("benchmark.round"),
            &["unknown field `round`", "rounds"],
        ),
        (
            "[benchmark]\nrun = \"x\"\nformat = \"nanobench\"\n",
            3,
            10,
            Some("benchmark.format"),
            &[
                "unknown benchmark format `nanobench`",
                "criterion",
                "divan",
                "gungraun",
            ],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\nfail_on = \"slower\"\n",
            4,
            11,
            Some("gate.fail_on"),
            &["practical-regression"],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\nmin_effect = \"1\"\n",
            4,
            14,
            Some("gate.min_effect"),
            &["percentage"],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\nmin_effect = \"150%\"\n",
            4,
            14,
            Some("gate.min_effect"),
            &["below 100"],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\ntolerance = \"0%\"\n",
            4,
            13,
            Some("gate.tolerance"),
            &["above 0%", "\"off\""],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\ntolerance = \"fast\"\n",
            4,
            13,
            Some("gate.tolerance"),
            &["such as \"5%\""],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[gate]\nclaims = \"enforce\"\n",
            4,
            10,
            Some("gate.claims"),
            &["report", "require"],
        ),
        (
            "[benchmark]\nrun = \"   \"\n",
            2,
            7,
            Some("benchmark.run"),
            &["must not be empty"],
        ),
        (
            "[benchmark]\nrun = \"x\"\npaths = [\"benches/[\"]\n",
            3,
            9,
            Some("benchmark.paths"),
            &["invalid glob \"benches/[\""],
        ),
        (
            "[benchmark]\nrun = \"x\"\nrounds = 5\nwarmup = 5\n",
            4,
            1,
            Some("benchmark.warmup"),
            &["smaller than rounds"],
        ),
        (
            "[benchmark]\nbuild = \"make\"\n",
            1,
            1,
            Some("benchmark"),
            &["missing field `run`"],
        ),
        (
            "[gate]\nfail_on = \"never\"\n",
            1,
            1,
            None,
            &["nothing to run: add a `[benchmark]` table or `[[suite]]` entries"],
        ),
        (
            "[benchmark]\nrun = \"x\"\n[extra]\n",
            3,
            2,
            Some("extra"),
            &["unknown field `extra`"],
        ),
        // Syntax errors: toml's own position.
        (
            "[benchmark]\nrun = \"x\nrounds = 3\n",
            2,
            9,
            None,
            &["string"],
        ),
        ("[benchmark\nrun = \"x\"\n", 1, 11, None, &[]),
        (
            "[benchmark]\nrun = \"x\"\nrun = \"y\"\n",
            3,
            1,
            None,
            &["duplicate key"],
        ),
    ];
    for (text, line, column, field, words) in table {
        let err = parse_repo_config(text).expect_err(text);
        let shown = err.to_string();
        assert_eq!(
            (err.line, err.column),
            (*line, *column),
            "{text:?}: {shown}"
        );
        assert_eq!(err.field.as_deref(), *field, "{text:?}: {shown}");
        for w in *words {
            assert!(shown.contains(w), "{text:?}: {shown:?} lacks {w:?}");
        }
        assert!(
            shown.starts_with(&format!(".benchgate.toml:{line}:{column}: ")),
            "{shown}"
        );
    }
}

#[test]
fn paths_match_changed_files() {
    let text =
        "[benchmark]\nrun = \"x\"\npaths = [\"benches/**\", \"src/bench_*.rs\", \"./Makefile\"]\n";
    let paths = parse_repo_config(text).unwrap().suites[0].paths.clone();
    let table: &[(&str, bool)] = &[
        ("benches/main.rs", true),
        ("benches/deep/inner/data.json", true),
        ("src/bench_sort.rs", true),
        ("src/nested/bench_sort.rs", false), // `*` does not cross a directory
        ("Makefile", true),
        ("src/lib.rs", false),
        ("benchesX/main.rs", false),
        ("README.md", false),
    ];
    for (path, want) in table {
        assert_eq!(paths.matches(path), *want, "{path}");
    }
    let changed = ["src/lib.rs", "benches/a.rs", "Makefile"];
    assert_eq!(paths.touched(changed), vec!["benches/a.rs", "Makefile"]);
}

#[test]
fn empty_paths_match_nothing() {
    let paths = PathGlobs::default();
    assert!(!paths.matches("benches/a.rs"));
}

#[test]
fn bench_from_head_reaches_the_plan_and_the_description() {
    let text = "[benchmark]\nrun = \"cargo bench\"\nformat = \"criterion\"\n\
                paths = [\"benches/**\"]\nbench_from_head = [\"benches/**\"]\n";
    let config = parse_repo_config(text).unwrap();
    let plan = config.comparison_config(&config.suites[0]);
    assert_eq!(plan.benchmark.bench_from_head, ["benches/**"]);
    assert!(
        config
            .describe()
            .contains("bench_from_head: benches/** (base runs head's version of these files)"),
        "{}",
        config.describe()
    );
    let changed = ["benches/new.rs", "benches/data.json", "src/lib.rs"];
    let mut suite = config.suites[0].clone();
    assert!(
        suite.benchmark_files_changed(changed).is_empty(),
        "both sides run head's"
    );
    suite.bench_from_head = PathGlobs::try_from(vec!["benches/*.rs".to_owned()]).unwrap();
    assert_eq!(
        suite.benchmark_files_changed(changed),
        ["benches/data.json"]
    );
    let plain = parse_repo_config("[benchmark]\nrun = \"x\"\n").unwrap();
    assert!(
        plain
            .comparison_config(&plain.suites[0])
            .benchmark
            .bench_from_head
            .is_empty()
    );
    let err = parse_repo_config("[benchmark]\nrun = \"x\"\nbench_from_head = [\"a/[\"]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid glob \"a/[\""), "{err}");
}

/// `[merge_queue]`, in its own file.
#[path = "merge_queue_tests.rs"]
mod merge_queue;

/// A suite's runs get no network unless it says so; the plan carries the choice to the agent.
#[test]
fn network_is_off_for_runs_unless_a_suite_asks() {
    let text = "[[suite]]\nname = \"db\"\nrun = \"./bench\"\nnetwork = true\n\n\
                [[suite]]\nname = \"cpu\"\nrun = \"./bench\"\n";
    let config = parse_repo_config(text).unwrap();
    let plans: Vec<bool> = config
        .suites
        .iter()
        .map(|s| config.comparison_config(s).benchmark.network)
        .collect();
    assert_eq!(plans, [true, false]);
    assert!(
        config
            .describe()
            .contains("network: runs may use the network"),
        "{}",
        config.describe()
    );
    let wire = serde_json::to_value(config.comparison_config(&config.suites[1])).unwrap();
    assert!(wire["benchmark"].get("network").is_none(), "{wire}");
    assert!(parse_repo_config("[benchmark]\nrun = \"x\"\nnetwork = \"yes\"\n").is_err());
}

/// `layout_salt` reaches the plan as written; a template without `{salt}` is refused with
/// what would work.
#[test]
fn layout_salt_is_checked_and_reaches_the_plan() {
    let text =
        "[benchmark]\nrun = \"cargo bench\"\nlayout_salt = \"RUSTFLAGS=-Cmetadata={salt}\"\n";
    let config = parse_repo_config(text).unwrap();
    let plan = config.comparison_config(&config.suites[0]);
    assert_eq!(
        plan.benchmark.layout_salt.as_deref(),
        Some("RUSTFLAGS=-Cmetadata={salt}")
    );
    assert!(config.describe().contains("layout_salt: RUSTFLAGS"));
    let padded = parse_repo_config("[benchmark]\nrun = \"x\"\nlayout_salt = \"env-padding\"\n");
    assert!(padded.is_ok());
    for bad in ["RUSTFLAGS=-Cmetadata=1", "=x{salt}", "{salt}"] {
        let text = format!("[benchmark]\nrun = \"x\"\nlayout_salt = \"{bad}\"\n");
        let err = parse_repo_config(&text).unwrap_err().to_string();
        assert!(err.contains("layout_salt must be"), "{bad}: {err}");
    }
}

/// `[gate] tolerance`: 5% when unset, a percentage, or "off" (wait for ±M as before).
#[test]
fn the_gate_tolerance_defaults_to_five_percent_and_can_be_off() {
    let plan = |gate: &str| {
        let text = format!("[benchmark]\nrun = \"x\"\n{gate}");
        let c = parse_repo_config(&text).unwrap();
        c.comparison_config(&c.suites[0]).gate.tolerance
    };
    assert_eq!(plan(""), Some(0.05));
    assert_eq!(plan("[gate]\ntolerance = \"2.5%\"\n"), Some(0.025));
    assert_eq!(plan("[gate]\ntolerance = \"off\"\n"), None);
}

/// `[gate] claims`: answered in the comment by default, required to hold on request.
#[test]
fn the_gate_reports_claims_unless_told_to_require_them() {
    use benchgate_api::agent::ClaimsMode;
    let plan = |gate: &str| {
        let text = format!("[benchmark]\nrun = \"x\"\n{gate}");
        let c = parse_repo_config(&text).unwrap();
        c.comparison_config(&c.suites[0]).gate.claims
    };
    assert_eq!(plan(""), ClaimsMode::Report);
    assert_eq!(plan("[gate]\nclaims = \"require\"\n"), ClaimsMode::Require);
}

/// `[gate] on_no_answer`: neutral unless the repository asks to fail closed; a misspelling is
/// an error naming both choices, never a silent neutral.
#[test]
fn a_check_without_an_answer_is_neutral_unless_told_to_fail_closed() {
    use benchgate_api::agent::NoAnswerConclusion;
    let plan = |gate: &str| {
        let text = format!("[benchmark]\nrun = \"x\"\n{gate}");
        parse_repo_config(&text)
            .map(|c| c.comparison_config(&c.suites[0]).gate.on_no_answer)
            .map_err(|e| e.to_string())
    };
    assert_eq!(plan(""), Ok(NoAnswerConclusion::Neutral));
    assert_eq!(
        plan("[gate]\non_no_answer = \"failure\"\n"),
        Ok(NoAnswerConclusion::Failure)
    );
    let err = plan("[gate]\non_no_answer = \"fail\"\n").unwrap_err();
    assert!(
        err.contains("on_no_answer") && err.contains("`neutral`") && err.contains("`failure`"),
        "{err}"
    );
}

#[test]
fn a_change_is_all_ignored_only_when_every_file_matches_and_something_changed() {
    let text = "[benchmark]\nrun = \"x\"\nignore = [\"**/*.md\", \"docs/**\", \".github/**\"]\n";
    let suite = parse_repo_config(text).unwrap().suites[0].clone();
    assert!(suite.all_ignored([
        "README.md",
        "docs/guide/intro.txt",
        ".github/workflows/ci.yml"
    ]));
    assert!(!suite.all_ignored(["README.md", "src/lib.rs"]));
    assert!(!suite.all_ignored([]), "nothing changed is no evidence");
    let plain = parse_repo_config("[benchmark]\nrun = \"x\"\n")
        .unwrap()
        .suites[0]
        .clone();
    assert!(
        !plain.all_ignored(["README.md"]),
        "no ignore: everything counts"
    );
    let bad = parse_repo_config("[benchmark]\nrun = \"x\"\nignore = [\"docs/[\"]\n").unwrap_err();
    assert!(bad.to_string().contains("benchmark.ignore"), "{bad}");
}

#[test]
fn a_budget_is_a_duration_people_write_within_its_range() {
    let budget = |text: &str| {
        parse_repo_config(&format!("[benchmark]\nrun = \"x\"\nbudget = \"{text}\"\n"))
            .map(|c| c.suites[0].budget.map(|b| b.secs()))
            .map_err(|e| e.to_string())
    };
    assert_eq!(budget("10m"), Ok(Some(600)));
    assert_eq!(budget("90s"), Ok(Some(90)));
    assert_eq!(budget("1h 30m"), Ok(Some(5400)));
    for bad in ["5s", "2d", "soon"] {
        let e = budget(bad).unwrap_err();
        assert!(e.contains("benchmark.budget"), "{bad}: {e}");
    }
    let plain = parse_repo_config("[benchmark]\nrun = \"x\"\n").unwrap();
    assert_eq!(plain.suites[0].budget, None);
    assert_eq!(
        plain
            .comparison_config(&plain.suites[0])
            .benchmark
            .budget_secs,
        None
    );
}

#[test]
fn measure_and_its_placeholder_go_together() {
    let ok = parse_repo_config(
        "[benchmark]\nrun = \"cargo bench -- --measurement-time {measure_secs}\"\nmeasure = \"300ms\"\n",
    )
    .unwrap();
    let plan = ok.comparison_config(&ok.suites[0]);
    assert_eq!(plan.benchmark.measure_secs, Some(0.3));
    assert!(
        ok.describe()
            .contains("measure: 0.3 s per benchmark per run"),
        "{}",
        ok.describe()
    );
    let missing = parse_repo_config(
        "[benchmark]\nrun = \"cargo bench -- --measurement-time {measure_secs}\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        missing.contains("holds `{measure_secs}` but `measure` is not set"),
        "{missing}"
    );
    let unused = parse_repo_config("[benchmark]\nrun = \"cargo bench\"\nmeasure = \"1s\"\n")
        .unwrap_err()
        .to_string();
    assert!(unused.contains("`measure` has no effect"), "{unused}");
    let absurd = parse_repo_config("[benchmark]\nrun = \"x {measure_secs}\"\nmeasure = \"2h\"\n")
        .unwrap_err()
        .to_string();
    assert!(absurd.contains("outside 0.01 s to 600 s"), "{absurd}");
    // A fixed criterion run length is pointed at the placeholder.
    let fixed =
        parse_repo_config("[benchmark]\nrun = \"cargo bench -- --measurement-time 3\"\n").unwrap();
    assert!(
        fixed
            .describe()
            .contains("`--measurement-time {measure_secs}` with `measure`"),
        "{}",
        fixed.describe()
    );
}

#[test]
fn measure_auto_is_for_criterion_suites_and_starts_at_the_reference_length() {
    let auto = parse_repo_config(
        "[benchmark]\nrun = \"cargo bench -- --measurement-time {measure_secs}\"\n\
         format = \"criterion\"\nmeasure = \"auto\"\n",
    )
    .unwrap();
    let plan = auto.comparison_config(&auto.suites[0]);
    assert_eq!(plan.benchmark.measure_secs, Some(1.0));
    assert!(plan.benchmark.measure_auto);
    assert!(
        auto.describe()
            .contains("measure: auto: each runner measures"),
        "{}",
        auto.describe()
    );
    let fixed = parse_repo_config(
        "[benchmark]\nrun = \"x {measure_secs}\"\nformat = \"criterion\"\nmeasure = \"1s\"\n",
    )
    .unwrap();
    assert!(
        !fixed
            .comparison_config(&fixed.suites[0])
            .benchmark
            .measure_auto
    );
    // Only criterion's runs report their own error at a known confidence.
    let go = parse_repo_config(
        "[benchmark]\nrun = \"go test -bench . -benchtime {measure_secs}s\"\nformat = \"go\"\n\
         measure = \"auto\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        go.contains("needs runs that report their own error") && go.contains("\"go\""),
        "{go}"
    );
    let typo =
        parse_repo_config("[benchmark]\nrun = \"x {measure_secs}\"\nmeasure = \"automatic\"\n")
            .unwrap_err()
            .to_string();
    assert!(typo.contains("or \"auto\""), "{typo}");
}

/// `counts`, `count_run` and `[gate] gate_on`: what reaches the plan, and every way they are
/// refused, each pointing at its key with what to write.
#[test]
fn counts_reach_the_plan_and_an_inexact_count_is_refused_with_the_reason() {
    let text = "[benchmark]\nrun = \"./bench\"\ncounts = \"instructions\"\n\n[gate]\ngate_on = \"instructions\"\n";
    let config = parse_repo_config(text).unwrap();
    let plan = config.comparison_config(&config.suites[0]);
    assert_eq!(
        plan.benchmark.counts,
        Some(benchgate_api::Counts::Instructions)
    );
    assert_eq!(plan.gate.gate_on, benchgate_api::GateOn::Instructions);
    let go = "[benchmark]\nrun = \"go test -bench . \"\nformat = \"go\"\ncounts = \"instructions\"\ncount_run = \"go test -run '^$' -bench {benchmarks} -benchtime 1000x\"\n";
    let config = parse_repo_config(go).unwrap();
    let plan = config.comparison_config(&config.suites[0]);
    assert!(
        plan.benchmark
            .count_run
            .unwrap()
            .contains("-benchtime 1000x")
    );

    let refused: &[(&str, usize, &str, &str)] = &[
        (
            "[benchmark]\nrun = \"cargo bench\"\nformat = \"criterion\"\ncounts = \"instructions\"\n",
            4,
            "benchmark.counts",
            "--profile-time",
        ),
        (
            "[benchmark]\nrun = \"go test\"\nformat = \"go\"\ncounts = \"instructions\"\n",
            4,
            "benchmark.counts",
            "-benchtime 1000x",
        ),
        (
            "[benchmark]\nrun = \"./b\"\ncounts = \"instructions\"\ncount_run = \"./b {benchmark}\"\n",
            4,
            "benchmark.count_run",
            "remove `count_run`",
        ),
        (
            "[benchmark]\nrun = \"./b\"\ncount_run = \"./b {benchmark}\"\n",
            3,
            "benchmark.count_run",
            "without `counts",
        ),
        (
            "[benchmark]\nrun = \"./b\"\n\n[gate]\ngate_on = \"both\"\n",
            1,
            "benchmark.counts",
            "needs counts",
        ),
        (
            "[benchmark]\nrun = \"./b\"\ncounts = \"cycles\"\n",
            3,
            "benchmark.counts",
            "instructions",
        ),
    ];
    for (text, line, field, words) in refused {
        let err = parse_repo_config(text).expect_err(text);
        assert_eq!(err.line, *line, "{text}: {err}");
        assert_eq!(err.field.as_deref(), Some(*field), "{text}: {err}");
        assert!(err.to_string().contains(words), "{text}: {err}");
    }
}
