//! Every file in tests/fixtures/bench parses (or is refused with a clear reason), with the
//! number of measurements and benchmarks and a few exact values asserted per file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchgate_harness::formats::{
    Format, Measurement, criterion_estimates, criterion_samples, detect, parse, read_criterion_dir,
};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bench");

/// One asserted measurement: its position in the output, and what it must hold.
struct Check {
    index: usize,
    benchmark: &'static str,
    metric: &'static str,
    unit: &'static str,
    value: f64,
    bounds: Option<(f64, f64)>,
}

const fn at(
    index: usize,
    benchmark: &'static str,
    metric: &'static str,
    unit: &'static str,
    value: f64,
) -> Check {
    Check {
        index,
        benchmark,
        metric,
        unit,
        value,
        bounds: None,
    }
}

const fn bounded(
    index: usize,
    benchmark: &'static str,
    value: f64,
    lower: f64,
    upper: f64,
) -> Check {
    Check {
        index,
        benchmark,
        metric: "time",
        unit: "ns",
        value,
        bounds: Some((lower, upper)),
    }
}

struct Case {
    file: &'static str,
    format: Format,
    /// The format `auto` must detect (criterion's `--output-format bencher` is libtest's format).
    detected: Format,
    measurements: usize,
    benchmarks: usize,
    checks: &'static [Check],
}

const fn case(
    file: &'static str,
    format: Format,
    measurements: usize,
    benchmarks: usize,
    checks: &'static [Check],
) -> Case {
    Case {
        file,
        format,
        detected: format,
        measurements,
        benchmarks,
        checks,
    }
}

use Format::*;

#[rustfmt::skip]
const CASES: &[Case] = &[
    // libtest
    case("libtest/bencher-rust-bench-failed.txt", Libtest, 2, 2, &[bounded(1, "tests::benchmark_c", 3215.0, 2859.0, 3571.0)]),
    case("libtest/bencher-rust-bench-ignore.txt", Libtest, 1, 1, &[bounded(0, "tests::benchmark", 3161.0, 2186.0, 4136.0)]),
    case("libtest/bencher-rust-bench-issue_390.txt", Libtest, 4, 4, &[
        bounded(0, "bleu::benchmark::bench_batch_bleu", 13_967_756.30, 13_700_986.66, 14_234_525.94),
        at(3, "tokenizer::benchmark::bench_tokenizer", "time", "ns", 15_690.73),
    ]),
    case("libtest/bencher-rust-bench-many.txt", Libtest, 6, 6, &[
        bounded(3, "tests::one_digit", 1_000.0, 0.0, 2_000.0),
        at(4, "tests::two_digit", "time", "ns", 22e6),
        at(5, "tests::three_digit", "time", "ns", 333e9),
    ]),
    case("libtest/bencher-rust-bench-multi_target.txt", Libtest, 2, 2, &[at(1, "tests::other_benchmark", "time", "ns", 3161.0)]),
    case("libtest/bencher-rust-bench-one.txt", Libtest, 1, 1, &[at(0, "tests::benchmark", "time", "ns", 3161.0)]),
    case("libtest/bencher-rust-bench-zero.txt", Libtest, 0, 0, &[]),
    case("libtest/gab-cargo_output.txt", Libtest, 2, 2, &[bounded(1, "bench_fib_20", 18_149.0, 17_394.0, 18_904.0)]),
    case(
        "libtest/gab-cargo_output2.txt",
        Libtest,
        4,
        4,
        &[bounded(
            0,
            "bench_engine_new",
            211_834.0,
            141_708.0,
            281_960.0,
        )],
    ),
    case("libtest/gab-cargo_output3.txt", Libtest, 2, 2, &[
        bounded(0, "bench_fib_10", 148.70, 146.49, 150.91),
        at(1, "bench_fib_20", "time", "ns", 18_794.12),
    ]),
    case("libtest/gab-cargo_output_units.txt", Libtest, 5, 5, &[
        at(0, "cmov", "cycles", "cycles", 2835.0),
        at(3, "upload", "MS/s", "MS/s", 1911.0),
    ]),
    // criterion stdout
    case("criterion/bencher-criterion-console-dogfood.txt", Criterion, 4, 4, &[
        bounded(0, "Adapter::Magic (JSON)", 3_463.2, 3_462.3, 3_464.1),
        bounded(3, "Adapter::Rust", 14_884.0, 14_881.0, 14_887.0),
    ]),
    case("criterion/bencher-criterion-console-failed.txt", Criterion, 4, 4, &[
        bounded(0, "file", 2.2311, 2.0246, 2.4461),
        bounded(2, "tracing_file", 60_753.0, 52_371.0, 71_099.0),
    ]),
    case("criterion/bencher-criterion-console-many.txt", Criterion, 5, 5, &[
        bounded(0, "file", 0.3239, 0.32062, 0.32755),
        bounded(4, "benchmark: name with spaces", 20.930, 18.195, 24.240),
    ]),
    Case {
        detected: Libtest,
        ..case(
            "criterion/gab-criterion_output-bencher-format.txt",
            Criterion,
            4,
            4,
            &[bounded(
                3,
                "Fibonacci (Execution)",
                1_672_496.0,
                1_662_330.0,
                1_682_662.0,
            )],
        )
    },
    // go test -bench
    case("go/bencher-go-bench-five.txt", Go, 5, 5, &[
        at(1, "BenchmarkFib20", "time", "ns", 40_537.123),
        at(4, "BenchmarkFib/my/tabled/benchmark_-_20", "time", "ns", 40_537.456),
    ]),
    case("go/bencher-go-bench-three.txt", Go, 4, 3, &[
        at(0, "BenchmarkFib10-8", "time", "ns", 210.2),
        at(3, "BenchmarkFib20WithAuxMetric-8", "auxMetricUnits", "auxMetricUnits", 4.0),
    ]),
    case("go/gab-go_fiber_duplicate_names_output.txt", Go, 16, 4, &[
        at(1, "github.com/gofiber/fiber/v3/middleware/cache.BenchmarkAppendMsgitem-4", "throughput", "bytes/s", 2833.37e6),
        at(8, "github.com/gofiber/fiber/v3/middleware/csrf.BenchmarkAppendMsgitem-4", "time", "ns", 0.3733),
    ]),
    case("go/gab-go_fiber_output.txt", Go, 18, 6, &[
        at(0, "Benchmark_Ctx_Accepts/run-[]string{\".xml\"}-4", "time", "ns", 247.6),
        at(10, "Benchmark_Utils_GetOffer/mime_extension#01-4", "bytes_per_op", "bytes", 48.0),
        at(11, "Benchmark_Utils_GetOffer/mime_extension#01-4", "allocs_per_op", "count", 2.0),
    ]),
    case("go/gab-go_output.txt", Go, 10, 8, &[
        at(5, "BenchmarkFib/my/tabled/benchmark_-_20,var1=13,var2=14", "time", "ns", 40_537.456),
        at(7, "BenchmarkFib11-16", "auxMetricUnits", "auxMetricUnits", 3.0),
    ]),
    case("go/suffixarray-benchmem-count10.txt", Go, 1680, 42, &[
        at(0, "BenchmarkNew/text=opticks/size=100K/bits=32-8", "time", "ns", 4_052_123.0),
        at(1, "BenchmarkNew/text=opticks/size=100K/bits=32-8", "throughput", "bytes/s", 24.68e6),
        at(2, "BenchmarkNew/text=opticks/size=100K/bits=32-8", "bytes_per_op", "bytes", 401_490.0),
        at(3, "BenchmarkNew/text=opticks/size=100K/bits=32-8", "allocs_per_op", "count", 2.0),
        // The second of the ten -count runs comes next, in order.
        at(4, "BenchmarkNew/text=opticks/size=100K/bits=32-8", "time", "ns", 4_072_122.0),
    ]),
    // benchstat's inputs are go test output
    case("benchstat/crc-new.txt", Go, 720, 36, &[
        at(0, "BenchmarkCRC32/poly=IEEE/size=15/align=0-8", "time", "ns", 43.6),
        at(1, "BenchmarkCRC32/poly=IEEE/size=15/align=0-8", "throughput", "bytes/s", 343.87e6),
    ]),
    case(
        "benchstat/crc-old.txt",
        Go,
        720,
        36,
        &[at(
            0,
            "BenchmarkCRC32/poly=IEEE/size=15/align=0-8",
            "time",
            "ns",
            44.6,
        )],
    ),
    case(
        "benchstat/new.txt",
        Go,
        20,
        2,
        &[at(
            0,
            "BenchmarkEncode/format=json-48",
            "time",
            "ns",
            1423.0,
        )],
    ),
    case(
        "benchstat/old.txt",
        Go,
        20,
        2,
        &[at(
            19,
            "BenchmarkEncode/format=gob-48",
            "time",
            "ns",
            3062.0,
        )],
    ),
    case("benchstat/issue19565.txt", Go, 24, 3, &[at(23, "BenchmarkC", "time", "ns", 10_000.0)]),
    case("benchstat/smallSample.txt", Go, 2, 1, &[at(1, "BenchmarkX", "time", "ns", 101.0)]),
    case("benchstat/units.txt", Go, 8, 2, &[at(0, "BenchmarkSize", "text-bytes", "text-bytes", 100.0)]),
    case(
        "benchstat/zero.txt",
        Go,
        20,
        6,
        &[at(
            1,
            "BenchmarkImperceptible",
            "b-bytes",
            "b-bytes",
            171_717_171_716.0,
        )],
    ),
    // hyperfine
    case("hyperfine/bencher-hyperfine-one.json", Hyperfine, 214, 1, &[at(0, "sleep 0.01", "wall_time", "ns", 10_745_851.46)]),
    case("hyperfine/bencher-hyperfine-two.json", Hyperfine, 40, 2, &[
        at(0, "sleep 0.1", "wall_time", "ns", 105_868_768.72),
        at(27, "sleep 0.2", "wall_time", "ns", 212_312_310.720_000_04),
    ]),
    // Google Benchmark
    case("google-benchmark/bencher-google-benchmark-two.json", Google, 4, 2, &[
        at(0, "fib_10", "time", "ns", 214.989_801_145_479_53),
        at(1, "fib_10", "cpu_time", "ns", 213.655_072_061_632_95),
    ]),
    case("google-benchmark/gbench-compare-test1_run1.json", Google, 28, 14, &[
        at(22, "BM_NotBadTimeUnit", "time", "ns", 0.4e9),
        at(23, "BM_NotBadTimeUnit", "cpu_time", "ns", 0.5e9),
    ]),
    case("google-benchmark/gbench-compare-test1_run2.json", Google, 28, 14, &[at(20, "BM_ThirdFaster", "time", "ns", 66.665)]),
    // Aggregates (BM_One, short) are summaries and are skipped.
    case("google-benchmark/gbench-compare-test3_run0.json", Google, 8, 2, &[
        at(0, "BM_Two", "time", "ns", 9.0),
        at(2, "BM_Two", "time", "ns", 8.0),
    ]),
    case("google-benchmark/gbench-compare-test3_run1.json", Google, 8, 4, &[at(4, "short", "time", "ns", 800.0)]),
    // pytest-benchmark: where `data` was cut short upstream the mean is used; test_sleep_2
    // kept all five rounds, so each is a sample.
    // Each benchmark's `ops` follows its times, as higher-is-better throughput.
    case("pytest-benchmark/bencher-pytest-four.json", Pytest, 12, 4, &[
        at(0, "bench.py::test_fib_1", "time", "ns", 149.956_102_486_288_36),
        at(3, "bench.py::test_fib_10", "throughput", "ops/s", 34_652.988_289_153_34),
        at(6, "bench.py::test_sleep_2", "time", "ns", 2_005_173_128.0),
        at(10, "bench.py::test_sleep_2", "time", "ns", 2_001_044_877.0),
    ]),
    case(
        "pytest-benchmark/bencher-pytest-two.json",
        Pytest,
        4,
        2,
        &[at(
            2,
            "bench.py::test_fib_20",
            "time",
            "ns",
            2_985_030.672_661_863,
        )],
    ),
    // Catch2 console
    case(
        "catch2/bencher-catch2-four.txt",
        Catch2,
        4,
        4,
        &[bounded(
            1,
            "Fibonacci / Fibonacci 20",
            41_731.0,
            41_250.0,
            42_622.0,
        )],
    ),
    case("catch2/bencher-catch2-issue_351.txt", Catch2, 6, 6, &[
        bounded(0, "Unit_assignment / Construction / Fibonacci 10", 344.0, 341.0, 349.0),
        bounded(4, "Even More Fibonacci / With a long name / Fibonacci 10 with a long name", 344.0, 341.0, 349.0),
    ]),
    case("catch2/bencher-catch2-two.txt", Catch2, 2, 2, &[bounded(1, "Fibonacci / Fibonacci 20", 1.0, 1.0, 1.0)]),
    case("catch2/gab-catch2_output_v3.txt", Catch2, 4, 4, &[
        bounded(2, "More Fibonacci / Fibonacci~ 5!", 36.0, 35.0, 37.0),
        bounded(3, "More Fibonacci / Fibonacci-15_bench", 3_789.0, 3_734.0, 3_888.0),
    ]),
    // BenchmarkDotNet
    case("benchmarkdotnet/bencher-dotnet-memory.json", Dotnet, 8, 2, &[
        at(0, "BenchmarkDotNet.Samples.Memory.AllocEmptyList", "time", "ns", 76.358_580_589_294_43),
        at(3, "BenchmarkDotNet.Samples.Memory.AllocEmptyList", "bytes_per_op", "bytes", 368.0),
    ]),
    case("benchmarkdotnet/bencher-dotnet-null_namespace.json", Dotnet, 1, 1, &[at(0, "NullNamespaceMethod", "time", "ns", 0.0)]),
    case(
        "benchmarkdotnet/bencher-dotnet-two.json",
        Dotnet,
        2,
        2,
        &[bounded(
            0,
            "BenchmarkDotNet.Samples.Intro.IntroJsonExport.Sleep10",
            10_362_283.085_796_878,
            10_342_253.249_292_579,
            10_382_312.922_301_177,
        )],
    ),
    case(
        "benchmarkdotnet/gab-benchmarkdotnet.json",
        Dotnet,
        27,
        2,
        &[at(
            14,
            "Sample.Benchmarks.Fib20",
            "time",
            "ns",
            51.178_764_641_284_94,
        )],
    ),
    // JMH
    case(
        "jmh/bencher-jmh-six.json",
        Jmh,
        18,
        6,
        &[at(
            0,
            "com.github.caffeine.caffeine.cache.ComputeBenchmark.compute_sameKey [thrpt] (computeType=Caffeine)",
            "throughput",
            "ops/s",
            1.524_957_059_947_031e8,
        )],
    ),
    // Bencher Metric Format
    case(
        "bmf/bencher-report_bmf_mixed.json",
        Bmf,
        3,
        3,
        &[Check {
            bounds: Some((1044.0, 1044.0)),
            ..at(
                0,
                "31aba8a9-977a-47d1-9fb6-e6b94b428471",
                "time",
                "ns",
                3247.0,
            )
        }],
    ),
    case("bmf/bencher-report_latency.json", Bmf, 3, 3, &[at(2, "tests::benchmark_c", "time", "ns", 3361.0)]),
];

/// Files refused on purpose, with a part of the message that says why.
const REFUSED: &[(&str, &str)] = &[
    (
        "benchstat/expected.crcOldNew.stdout",
        "this is benchstat summary output, not samples",
    ),
    (
        "benchstat/expected.csvOldNew.stdout",
        "this is benchstat summary output, not samples",
    ),
    (
        "benchstat/expected.issue19565.stdout",
        "this is benchstat summary output, not samples",
    ),
    (
        "benchstat/expected.smallSample.stdout",
        "this is benchstat summary output, not samples",
    ),
    (
        "benchstat/expected.units.stdout",
        "this is benchstat summary output, not samples",
    ),
    (
        "benchstat/expected.zero.stdout",
        "this is benchstat summary output, not samples",
    ),
    // Formats benchgate does not support (github-action-benchmark's custom JSON, Julia).
    (
        "other/gab-customSmallerIsBetter_output.json",
        "expected JSON from a known harness",
    ),
    (
        "other/gab-julia_output.json",
        "expected JSON from a known harness",
    ),
];

fn read(file: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(file))
        .unwrap_or_else(|e| panic!("cannot read fixture {file}: {e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-9)
}

fn assert_check(file: &str, got: &[Measurement], check: &Check) {
    let m = got
        .get(check.index)
        .unwrap_or_else(|| panic!("{file}: no measurement #{}", check.index));
    let context = format!("{file} #{}: {m:?}", check.index);
    assert_eq!(m.benchmark, check.benchmark, "{context}");
    assert_eq!(m.metric, check.metric, "{context}");
    assert_eq!(m.unit, check.unit, "{context}");
    assert!(
        close(m.value, check.value),
        "{context}: expected value {}",
        check.value
    );
    if let Some((lo, hi)) = check.bounds {
        assert!(
            m.lower.is_some_and(|l| close(l, lo)),
            "{context}: expected lower {lo}"
        );
        assert!(
            m.upper.is_some_and(|u| close(u, hi)),
            "{context}: expected upper {hi}"
        );
    }
}

#[test]
fn formats_every_fixture_parses_with_counts_and_values() {
    // Every file is checked and every mismatch reported, not only the first.
    let mut failures = Vec::new();
    for case in CASES {
        let text = read(case.file);
        let got = match parse(case.format, &text) {
            Ok(got) => got,
            Err(e) => {
                failures.push(format!("{}: {e}", case.file));
                continue;
            }
        };
        let benchmarks: BTreeSet<&str> = got.iter().map(|m| m.benchmark.as_str()).collect();
        if (got.len(), benchmarks.len()) != (case.measurements, case.benchmarks) {
            failures.push(format!(
                "{}: {} measurements of {} benchmarks, expected {} of {}",
                case.file,
                got.len(),
                benchmarks.len(),
                case.measurements,
                case.benchmarks
            ));
        }
        for check in case.checks {
            if let Err(e) = std::panic::catch_unwind(|| assert_check(case.file, &got, check)) {
                let message = e
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "check failed".into());
                failures.push(message);
            }
        }
        assert!(got.iter().all(|m| m.value.is_finite()), "{}", case.file);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn formats_auto_detects_every_fixture_and_parses_the_same() {
    for case in CASES {
        let text = read(case.file);
        assert_eq!(detect(&text), Ok(case.detected), "{}", case.file);
        let explicit = parse(case.format, &text).expect("parses explicitly");
        assert_eq!(parse(Format::Auto, &text), Ok(explicit), "{}", case.file);
    }
}

#[test]
fn formats_refused_fixtures_say_why() {
    for (file, reason) in REFUSED {
        let err = parse(Format::Auto, &read(file)).expect_err(file);
        assert!(err.to_string().contains(reason), "{file}: {err}");
    }
    // Named explicitly as Go output, a benchstat table is refused the same way.
    let err = parse(Format::Go, &read("benchstat/expected.crcOldNew.stdout")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "go output, input: this is benchstat summary output, not samples: give benchgate the raw \
         `go test -bench` output that benchstat was run on"
    );
}

#[test]
fn formats_criterion_directory_reads_each_sample_in_order() {
    let dir = Path::new(ROOT).join("criterion");
    let new = read_criterion_dir(&dir, "new").unwrap();
    assert_eq!(new.len(), 400);
    let names: BTreeSet<&str> = new.iter().map(|m| m.benchmark.as_str()).collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        [
            "fib 20 - fast",
            "fib 20 - slow",
            "get/deduplicate get/1024",
            "get/moka get/1024"
        ]
    );
    assert_check(
        "new",
        &new,
        &at(
            0,
            "get/deduplicate get/1024",
            "time",
            "ns",
            2_425_323.714_285_714,
        ),
    );
    let fast = new
        .iter()
        .position(|m| m.benchmark == "fib 20 - fast")
        .unwrap();
    // 1044826 ns over 202638 iterations, the first line of raw.csv.
    assert_check(
        "new",
        &new,
        &at(fast, "fib 20 - fast", "time", "ns", 1_044_826.0 / 202_638.0),
    );

    // A named baseline: the real A/B pair of crate versions 0.3.2 and 0.3.6.
    let old = read_criterion_dir(&dir, "0.3.2").unwrap();
    assert_eq!(old.len(), 200);
    assert_check(
        "0.3.2",
        &old,
        &at(
            0,
            "get/deduplicate get/1024",
            "time",
            "ns",
            2_265_125.238_095_238,
        ),
    );

    let err = read_criterion_dir(&dir, "nonexistent").unwrap_err();
    assert!(
        err.to_string().contains("no `nonexistent/sample.json`"),
        "{err}"
    );
}

#[test]
fn formats_criterion_json_files_parse_alone() {
    let samples =
        criterion_samples("fib", &read("criterion/fib/fib20-slow/new/sample.json")).unwrap();
    assert!(!samples.is_empty());
    // Linear sampling: the slope is criterion's estimate.
    let fast =
        criterion_estimates("fib", &read("criterion/fib/fib20-fast/new/estimates.json")).unwrap();
    assert_check(
        "estimates",
        &[fast],
        &Check {
            bounds: Some((4.844_763_216_940_279_4, 4.898_471_522_862_84)),
            ..at(0, "fib", "time", "ns", 4.872_807_302_695_62)
        },
    );
    // Flat sampling has no slope: the mean.
    let flat = criterion_estimates(
        "dedup",
        &read("criterion/deduplicate/get_deduplicate_get_1024/new/estimates.json"),
    )
    .unwrap();
    assert_check(
        "estimates",
        &[flat],
        &Check {
            bounds: Some((1_660_414.511_666_666_3, 1_866_206.613_869_047_3)),
            ..at(0, "dedup", "time", "ns", 1_761_930.32)
        },
    );
}

/// No silent skips: every fixture file is in one of the tables above.
#[test]
fn formats_every_fixture_file_is_covered() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out)
            } else {
                out.push(path)
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(ROOT), &mut files);
    let covered: BTreeSet<&str> = CASES
        .iter()
        .map(|c| c.file)
        .chain(REFUSED.iter().map(|(f, _)| *f))
        .collect();
    for path in files {
        let relative = path
            .strip_prefix(ROOT)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // criterion's directory tree is read by read_criterion_dir above.
        let criterion_tree = relative.starts_with("criterion/deduplicate/")
            || relative.starts_with("criterion/fib/");
        if relative == "README.md" || criterion_tree {
            continue;
        }
        assert!(
            covered.contains(relative.as_str()),
            "fixture {relative} has no test case"
        );
    }
}
