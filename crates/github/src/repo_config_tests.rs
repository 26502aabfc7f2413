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
    assert_eq!(c.benchmark.build.as_deref(), Some("cargo build --release"));
    assert_eq!(c.benchmark.run.as_str(), "./target/release/bench-suite");
    assert_eq!(c.benchmark.format, BenchFormat::Criterion);
    assert_eq!(c.benchmark.rounds.get(), 10);
    assert_eq!(c.benchmark.warmup, 1);
    assert_eq!(c.benchmark.runner.as_str(), "linux-x86-quiet");
    assert_eq!(c.benchmark.paths.patterns(), ["benches/**"]);
    assert_eq!(c.gate.fail_on, FailOn::Regression);
    assert!((c.gate.min_effect.fraction() - 0.01).abs() < 1e-12);
}

#[test]
fn only_run_is_required() {
    let c = parse_repo_config("[benchmark]\nrun = \"make bench\"\n").unwrap();
    assert_eq!(c.benchmark.build, None);
    assert_eq!(c.benchmark.format, BenchFormat::Command);
    assert_eq!(c.benchmark.rounds.get(), 10);
    assert_eq!(c.benchmark.warmup, 1);
    assert_eq!(c.benchmark.runner.as_str(), "default");
    assert!(c.benchmark.paths.patterns().is_empty());
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
            &["missing field `benchmark`"],
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
    let paths = parse_repo_config(text).unwrap().benchmark.paths;
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
