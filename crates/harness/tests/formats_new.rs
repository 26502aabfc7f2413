//! divan, pyperf, gungraun and JMH's text table, read from the real outputs in
//! tests/fixtures/real: counts, exact values with names, metrics, units and directions, what
//! `auto` detects, the errors malformed input gets, and that no mangling of a fixture panics.

use std::collections::BTreeSet;

use benchgate_api::metric::Direction;
use benchgate_harness::formats::{Format, detect, parse, parse_report};
use proptest::prelude::*;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real");

/// A fixture's text. Some JMH logs were written by a Windows console in cp1252 (`±` is byte
/// 0xB1); a user's file goes through the same lossy reading.
fn read(file: &str) -> String {
    let bytes = std::fs::read(format!("{ROOT}/{file}")).expect("fixture exists");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One asserted measurement: its position in the output and what it must hold.
struct Check {
    index: usize,
    benchmark: &'static str,
    metric: &'static str,
    unit: &'static str,
    value: f64,
    direction: Direction,
}

const fn at(
    index: usize,
    benchmark: &'static str,
    metric: &'static str,
    unit: &'static str,
    value: f64,
    direction: Direction,
) -> Check {
    Check {
        index,
        benchmark,
        metric,
        unit,
        value,
        direction,
    }
}

struct Case {
    file: &'static str,
    format: Format,
    measurements: usize,
    benchmarks: usize,
    warnings: usize,
    checks: &'static [Check],
}

use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
use Format::{Divan, Gungraun, Jmh, Pyperf};

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { file: "divan/divan-readme-fibonacci.txt", format: Divan, measurements: 6, benchmarks: 6, warnings: 0, checks: &[
        at(0, "example/fibonacci/1", "time", "ns", 0.672, Lower),
        at(4, "example/fibonacci/16", "time", "ns", 3006.0, Lower),
        at(5, "example/fibonacci/32", "time", "ns", 6.344e6, Lower),
    ]},
    Case { file: "divan/divan-readme-9fe2fbd.txt", format: Divan, measurements: 1, benchmarks: 1, warnings: 0, checks: &[
        at(0, "example/f\u{200b}ibonacci", "time", "ns", 198.1, Lower),
    ]},
    Case { file: "divan/divan-internal_benches-readme.txt", format: Divan, measurements: 3, benchmarks: 3, warnings: 0, checks: &[
        at(0, "divan/time/timer/get_tsc", "time", "ns", 0.162, Lower),
        at(1, "divan/time/timer/measure/precision", "time", "ns", 184_500.0, Lower),
        at(2, "divan/time/timer/measure/sample_loop_overhead", "time", "ns", 317_100.0, Lower),
    ]},
    Case { file: "pyperf/pyperf-mult_list_py36.json", format: Pyperf, measurements: 180, benchmarks: 3, warnings: 0, checks: &[
        at(0, "[1]*1000", "time", "ns", 2.087224121094522e-06 * 1e9, Lower),
        at(179, "[1,2,3]*1000", "time", "ns", 5.22639044220341e-06 * 1e9, Lower),
    ]},
    Case { file: "pyperf/pyperf-mult_list_py37.json", format: Pyperf, measurements: 180, benchmarks: 3, warnings: 0, checks: &[
        at(0, "[1]*1000", "time", "ns", 2.080216247701827e-06 * 1e9, Lower),
        at(179, "[1,2,3]*1000", "time", "ns", 6.086706634711447e-06 * 1e9, Lower),
    ]},
    Case { file: "pyperf/pyperf-telco.json", format: Pyperf, measurements: 120, benchmarks: 1, warnings: 0, checks: &[
        at(0, "telco", "time", "ns", 0.022752201875846367 * 1e9, Lower),
        at(119, "telco", "time", "ns", 0.02241712374961935 * 1e9, Lower),
    ]},
    Case { file: "pyperf/pyperf-track_memory.json", format: Pyperf, measurements: 3, benchmarks: 1, warnings: 0, checks: &[
        at(0, "timeit", "peak_memory", "bytes", 7_360_512.0, Lower),
        at(2, "timeit", "peak_memory", "bytes", 7_380_992.0, Lower),
    ]},
    Case { file: "gungraun/bencher-iai_callgrind-two.txt", format: Gungraun, measurements: 12, benchmarks: 2, warnings: 0, checks: &[
        at(0, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "instructions", "count", 1734.0, Lower),
        at(1, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "l1_hits", "count", 2359.0, Lower),
        at(4, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "total_read_write", "count", 2362.0, Lower),
        at(11, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci long:30", "estimated_cycles", "count", 35_638_724.0, Lower),
    ]},
    // The new value is the one on the left of `|`; the old one is the tool's own baseline.
    Case { file: "gungraun/bencher-iai_callgrind-change.txt", format: Gungraun, measurements: 12, benchmarks: 2, warnings: 0, checks: &[
        at(0, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "instructions", "count", 1650.0, Lower),
        at(6, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci long:30", "instructions", "count", 24_943_490.0, Lower),
    ]},
    Case { file: "gungraun/bencher-gungraun-with-summary-and-regressions.txt", format: Gungraun, measurements: 12, benchmarks: 2, warnings: 0, checks: &[
        at(6, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci long:30", "instructions", "count", 26_214_734.0, Lower),
    ]},
    Case { file: "gungraun/bencher-gungraun-with-gungraun-summary.txt", format: Gungraun, measurements: 12, benchmarks: 2, warnings: 0, checks: &[
        at(5, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "estimated_cycles", "count", 2464.0, Lower),
    ]},
    Case { file: "gungraun/bencher-gungraun-with-dhat-and-global-bus-events.txt", format: Gungraun, measurements: 30, benchmarks: 2, warnings: 0, checks: &[
        at(6, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "ge", "count", 2.0, Lower),
        at(7, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "dhat_total_bytes", "bytes", 29_499.0, Lower),
        at(8, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci short:10", "dhat_total_blocks", "count", 2806.0, Lower),
        at(29, "rust_iai_callgrind::bench_fibonacci_group::bench_fibonacci long:30", "dhat_writes_bytes", "bytes", 37_733_810.0, Lower),
    ]},
    // 48 percentile rows skipped in one warning, 10 `≈ 10⁻⁷` scores skipped with one each.
    Case { file: "jmh-text/natural-number-generator_ALL_ubuntu_18.10LTS.res", format: Jmh, measurements: 14, benchmarks: 14, warnings: 11, checks: &[
        at(0, "NaturalNumberGeneratorBenchmark.generateViaIteration [thrpt] (number=10)", "throughput", "ops/s", 12_068_269.101, Higher),
        at(6, "NaturalNumberGeneratorBenchmark.generateViaIteration [avgt] (number=1000000)", "time", "ns", 0.009e9, Lower),
        at(13, "NaturalNumberGeneratorBenchmark.streamMethod [ss] (number=1000000)", "time", "ns", 0.458e9, Lower),
    ]},
    Case { file: "jmh-text/natural-number-generator_ALL_graalvm-ce-java11-19.3.0.2.res", format: Jmh, measurements: 14, benchmarks: 14, warnings: 11, checks: &[
        at(0, "NaturalNumberGeneratorBenchmark.generateViaIteration [thrpt] (number=10)", "throughput", "ops/s", 21_574_987.817, Higher),
        at(5, "NaturalNumberGeneratorBenchmark.streamMethod [thrpt] (number=1000000)", "throughput", "ops/s", 44.097, Higher),
    ]},
    Case { file: "jmh-text/measuring-time_ubuntu_18.10LTS.res", format: Jmh, measurements: 2, benchmarks: 2, warnings: 0, checks: &[
        at(0, "MeasuringTimeBenchmark.millis [avgt]", "time", "ns", 33.351, Lower),
        at(1, "MeasuringTimeBenchmark.nano [avgt]", "time", "ns", 30.106, Lower),
    ]},
    Case { file: "jmh-text/measuring-time_AVERAGETIME_graalvm-ce-java11-19.3.0.2.res", format: Jmh, measurements: 2, benchmarks: 2, warnings: 0, checks: &[
        at(1, "MeasuringTimeBenchmark.nano [avgt]", "time", "ns", 22.337, Lower),
    ]},
    // Groups of rows separated by blank lines inside the one table, as people paste and edit
    // JMH's table (JMH itself prints none): every group is read.
    Case { file: "jmh-text/circe-readme-throughput-groups.txt", format: Jmh, measurements: 40, benchmarks: 40, warnings: 0, checks: &[
        at(0, "DecodingBenchmark.decodeFoosC [thrpt]", "throughput", "ops/s", 3711.680, Higher),
        at(39, "PrintingBenchmark.printIntsS [thrpt]", "throughput", "ops/s", 53015.753, Higher),
    ]},
    Case { file: "jmh-text/luajava-perf-lua-param-groups.txt", format: Jmh, measurements: 12, benchmarks: 12, warnings: 0, checks: &[
        at(0, "MethodCallBenchmark.benchmarkPurePcall [avgt] (lua=Lua 5.4)", "time", "ns", 83.966, Lower),
        at(11, "SimpleBenchmark.benchmarkBinaryTrees [avgt] (lua=LuaJ)", "time", "ns", 1284857.526, Lower),
    ]},
    Case { file: "jmh-text/expensive-exceptions_openjdk-13.24.res", format: Jmh, measurements: 5, benchmarks: 5, warnings: 0, checks: &[
        at(0, "ExpensiveExceptions.createExceptionWithoutThrowingIt [avgt]", "time", "ns", 11.998e6, Lower),
        at(4, "ExpensiveExceptions.throwExceptionWithoutAddingStackTrace [avgt]", "time", "ns", 0.481e6, Lower),
    ]},
];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[test]
fn real_fixtures_parse_to_the_expected_measurements() {
    let mut failures = Vec::new();
    for case in CASES {
        let text = read(case.file);
        let file = case.file;
        match detect(&text) {
            Ok(f) if f == case.format => {}
            other => failures.push(format!("{file}: detected {other:?}, not {}", case.format)),
        }
        let parsed = match parse_report(case.format, &text) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        let ms = &parsed.measurements;
        let names: BTreeSet<&str> = ms.iter().map(|m| m.benchmark.as_str()).collect();
        if ms.len() != case.measurements || names.len() != case.benchmarks {
            failures.push(format!(
                "{file}: {} measurements of {} benchmarks, expected {} of {}",
                ms.len(),
                names.len(),
                case.measurements,
                case.benchmarks
            ));
        }
        if parsed.warnings.len() != case.warnings {
            failures.push(format!("{file}: warnings {:?}", parsed.warnings));
        }
        // `parse` gives the same measurements without the warnings.
        if parse(case.format, &text).as_ref().ok() != Some(ms) {
            failures.push(format!("{file}: parse and parse_report disagree"));
        }
        for c in case.checks {
            match ms.get(c.index) {
                Some(m)
                    if m.benchmark == c.benchmark
                        && m.metric == c.metric
                        && m.unit == c.unit
                        && close(m.value, c.value)
                        && m.direction == c.direction => {}
                got => failures.push(format!("{file}[{}]: got {got:?}", c.index)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn jmh_text_rows_keep_the_error_as_bounds() {
    let parsed = parse_report(Jmh, &read("jmh-text/measuring-time_ubuntu_18.10LTS.res")).unwrap();
    let m = &parsed.measurements[0];
    assert!(close(m.lower.unwrap(), 33.351 - 1.139), "{m:?}");
    assert!(close(m.upper.unwrap(), 33.351 + 1.139), "{m:?}");
}

#[test]
fn the_jmh_percentile_warning_counts_the_rows_it_skipped() {
    let text = read("jmh-text/natural-number-generator_ALL_ubuntu_18.10LTS.res");
    let parsed = parse_report(Jmh, &text).unwrap();
    assert!(
        parsed.warnings[0].starts_with("jmh: skipped 48 sample-mode percentile row(s)"),
        "{:?}",
        parsed.warnings
    );
    assert!(parsed.warnings[1].contains("`NaturalNumberGeneratorBenchmark.generateViaIteration [avgt] (number=10)`: its score \"≈ 10⁻⁷\""));
}

/// divan's counter rows (throughput, `AllocProfiler`), which no published file found had.
/// The shape follows divan's README and its `counters`/`alloc` examples.
#[test]
fn divan_counter_rows_follow_their_benchmark() {
    let text = "\
Timer precision: 20 ns
bench             fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ render                       │               │               │               │         │
│  ╰─ 100         35.03 µs      │ 43.16 µs      │ 35.81 µs      │ 37.13 µs      │ 100     │ 100
│                 60.32 GB/s    │ 48.96 GB/s    │ 59 GB/s       │ 56.9 GB/s     │         │
│                 2.854 Mitem/s │ 2.316 Mitem/s │ 2.791 Mitem/s │ 2.692 Mitem/s │         │
╰─ alloc          1.2 µs        │ 2 µs          │ 1.3 µs        │ 1.4 µs        │ 100     │ 800
                  alloc:        │               │               │               │         │
                    2           │ 2             │ 2             │ 2             │         │
                    96 B        │ 96 B          │ 96 B          │ 96 B          │         │
";
    let ms = parse(Divan, text).unwrap();
    let got: Vec<(&str, &str, &str, f64, Direction)> = ms
        .iter()
        .map(|m| {
            (
                m.benchmark.as_str(),
                m.metric.as_str(),
                m.unit.as_str(),
                m.value,
                m.direction,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("bench/render/100", "time", "ns", 37_130.0, Lower),
            ("bench/render/100", "throughput", "bytes/s", 56.9e9, Higher),
            (
                "bench/render/100",
                "items_per_second",
                "items/s",
                2.692e6,
                Higher
            ),
            ("bench/alloc", "time", "ns", 1400.0, Lower),
            ("bench/alloc", "alloc_count", "count", 2.0, Lower),
            ("bench/alloc", "alloc_bytes", "bytes", 96.0, Lower),
        ]
    );
}

#[test]
fn gungraun_reads_names_over_several_lines_and_the_older_layout() {
    let text = "\
bench::group::multi id:string with two
lines
  Instructions:                   7|N/A             (*********)
iai_old::bench
  Instructions:           368392384 (+0.036690%)
  Estimated Cycles:       529086708 (No change)
";
    let ms = parse(Gungraun, text).unwrap();
    assert_eq!(
        ms[0].benchmark,
        "bench::group::multi id:string with two lines"
    );
    assert_eq!(
        (ms[1].benchmark.as_str(), ms[1].value),
        ("iai_old::bench", 368_392_384.0)
    );
    assert_eq!(ms[2].metric, "estimated_cycles");
    let parsed =
        parse_report(Gungraun, "a::b\n  Instructions:   N/A|1734   (*********)\n").unwrap();
    assert!(parsed.measurements.is_empty());
    assert_eq!(
        parsed.warnings,
        ["gungraun: `a::b` instructions has no current value (N/A); skipped"]
    );
}

#[test]
fn names_configured_before_the_rename_still_work() {
    assert_eq!("iai-callgrind".parse::<Format>(), Ok(Gungraun));
    assert_eq!("divan".parse::<Format>(), Ok(Divan));
    assert_eq!("pyperf".parse::<Format>(), Ok(Pyperf));
}

/// (format, input, the whole error message).
const MALFORMED: &[(Format, &str, &str)] = &[
    (
        Divan,
        "x      fastest │ slowest │ median │ mean       │ samples │ iters\n╰─ a   1 ns    │ 2 ns    │ 1 ns   │ 9 furlongs │ 1       │ 1",
        "divan output, line 2, column 37: expected a time such as `1.5 µs` in the mean column, found \"9 furlongs\"",
    ),
    (
        Divan,
        "x      fastest │ slowest │ median │ mean │ samples │ iters\n╰─ a   1 ns    │ 2 ns    │ 1 ns",
        "divan output, line 2, column 8: expected 6 cells separated by `│` (fastest … iters), found 3",
    ),
    (
        Divan,
        "x      fastest │ slowest │ median │ mean │ samples │ iters\n╰─ a  1 ns    │ 2 ns    │ 1 ns   │ 1 ns │ 1       │ 1\n       1 GB/s │ 1 GB/s  │ 1 GB/s │ x GB/s │ │",
        "divan output, line 3, column 36: expected a number, found \"x\"",
    ),
    (
        Pyperf,
        r#"{"benchmarks":[{"metadata":{"name":"a"},"runs":[{"values":[0.1,"x"]}]}]}"#,
        "pyperf output, field `benchmarks[0].runs[0].values[1]`: expected a number, found a string",
    ),
    (
        Pyperf,
        r#"{"benchmarks":[{"runs":[{"values":[0.1]}]}]}"#,
        "pyperf output, field `benchmarks[0]`: expected a benchmark name in `metadata.name` (of the benchmark or suite)",
    ),
    (
        Pyperf,
        r#"{"metadata":{"unit":"furlong","name":"a"},"benchmarks":[{"runs":[]}]}"#,
        "pyperf output, field `benchmarks[0]`: expected the unit `second`, `byte` or `integer`, found \"furlong\"",
    ),
    (
        Pyperf,
        "{\n  \"benchmarks\": [",
        "pyperf output, line 2, column 17: expected valid JSON (EOF while parsing a list)",
    ),
    (
        Gungraun,
        "  Instructions:   1734|N/A   (*********)",
        "gungraun output, line 1, column 1: expected a benchmark name before the metric `Instructions`",
    ),
    (
        Gungraun,
        "a::b\n  Instructions:   17x4|N/A   (*********)",
        "gungraun output, line 2, column 19: expected a count before `|`, found \"17x4\"",
    ),
    (
        Jmh,
        "Benchmark  Mode  Cnt  Score   Error  Units\nFoo.bar    avgt    5  1.0 ±  0.1  parsecs/op",
        "jmh output, line 2: ",
    ),
    (
        Jmh,
        "Benchmark  Mode  Cnt  Score   Error  Units\nFoo.bar",
        "jmh output, line 2, column 1: expected a result row (benchmark, mode, score, units), found \"Foo.bar\"",
    ),
];

#[test]
fn malformed_input_names_the_line_column_or_field() {
    let mut failures = Vec::new();
    for (format, input, expected) in MALFORMED {
        match parse(*format, input) {
            Ok(got) if expected.ends_with(": ") => {
                // A row with an unknown unit is skipped with a warning, not an error.
                let report = parse_report(*format, input).unwrap();
                if !got.is_empty() || report.warnings.len() != 1 {
                    failures.push(format!("{format} {input:?}: {got:?} {:?}", report.warnings));
                }
            }
            Ok(got) => failures.push(format!("{format} {input:?}: parsed as {got:?}")),
            Err(e) if e.to_string() != *expected => failures.push(format!(
                "{format} {input:?}:\n  got      {e}\n  expected {expected}"
            )),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn detection_says_what_it_checked_when_nothing_fits() {
    let e = detect("hello world").unwrap_err().to_string();
    for checked in [
        "divan (",
        "gungraun (",
        "jmh (",
        "go (",
        "criterion (",
        "catch2 (",
        "libtest (",
        "raw (line 1 is not a number: \"hello world\")",
    ] {
        assert!(e.contains(checked), "{checked} missing from: {e}");
    }
    let e = detect(r#"{"something": "else"}"#).unwrap_err().to_string();
    for checked in [
        "jmh (",
        "hyperfine (",
        "dotnet (",
        "pyperf (",
        "pytest and google (",
        "bmf (",
    ] {
        assert!(e.contains(checked), "{checked} missing from: {e}");
    }
}

/// Output that earlier versions of `detect` took for another harness.
#[test]
fn detection_no_longer_mistakes_the_new_formats() {
    // divan's `│` rules made it a benchstat summary; pyperf's `benchmarks` made it Google
    // Benchmark; gungraun's leading `running 0 tests` made it libtest.
    assert_eq!(detect(&read("divan/divan-readme-fibonacci.txt")), Ok(Divan));
    assert_eq!(detect(&read("pyperf/pyperf-telco.json")), Ok(Pyperf));
    assert_eq!(
        detect(&read("gungraun/bencher-iai_callgrind-two.txt")),
        Ok(Gungraun)
    );
}

const ALL_FILES: &[&str] = &[
    "divan/divan-readme-fibonacci.txt",
    "divan/divan-internal_benches-readme.txt",
    "pyperf/pyperf-track_memory.json",
    "gungraun/bencher-gungraun-with-dhat-and-global-bus-events.txt",
    "jmh-text/measuring-time_ubuntu_18.10LTS.res",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any prefix of a real fixture, and any one character replaced, parses or fails cleanly.
    #[test]
    fn mangled_fixtures_never_panic(
        file in 0..ALL_FILES.len(),
        cut in 0.0f64..1.0,
        at in 0.0f64..1.0,
        with in prop::sample::select(vec!['│', '|', ' ', '\n', '0', 'x', '─', '├', '╰', ':', '"', '{', '±']),
    ) {
        let text = read(ALL_FILES[file]);
        let chars: Vec<char> = text.chars().collect();
        let prefix: String = chars[..(cut * chars.len() as f64) as usize].iter().collect();
        let mut mutated = chars.clone();
        let i = ((at * chars.len() as f64) as usize).min(chars.len() - 1);
        mutated[i] = with;
        let mutated: String = mutated.into_iter().collect();
        for input in [prefix, mutated] {
            let _ = detect(&input);
            for format in [Format::Auto, Divan, Pyperf, Gungraun, Jmh] {
                let _ = parse_report(format, &input);
            }
        }
    }
}

/// `analyze` tells the user which format it read a file as, and passes on what was skipped.
#[test]
fn analyze_reports_the_detected_format_and_skipped_rows() {
    use benchgate_harness::cli::analyze::read_results_file;
    let path = std::path::PathBuf::from(format!("{ROOT}/pyperf/pyperf-telco.json"));
    let file = read_results_file(&path, Format::Auto).unwrap();
    assert_eq!(
        file.read_as(&path),
        format!(
            "{}: read as pyperf (auto-detected), 40 runs",
            path.display()
        )
    );
    let path = std::path::PathBuf::from(format!(
        "{ROOT}/jmh-text/natural-number-generator_ALL_ubuntu_18.10LTS.res"
    ));
    let file = read_results_file(&path, Jmh).unwrap();
    assert!(
        file.read_as(&path).ends_with(
            "read as jmh (as configured), one run, a summary (one aggregate per benchmark, no samples)"
        ),
        "{}",
        file.read_as(&path)
    );
    assert_eq!(file.warnings.len(), 11);
    assert!(file.warnings[0].starts_with(&format!("{}: jmh: skipped 48", path.display())));
}
