//! Real files that broke the parsers (tests/fixtures/real, provenance in its README): each
//! parses with the expected series, names, units and directions.

use std::collections::BTreeSet;
use std::path::Path;

use benchgate_harness::formats::{
    CRITERION_LATEST, Format, Measurement, Parsed, parse_report, read_results_path,
};

use benchgate_api::Direction::{self, HigherIsBetter, LowerIsBetter};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real");
const BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bench");

fn report(format: Format, file: &str) -> Parsed {
    let text = std::fs::read_to_string(Path::new(REAL).join(file))
        .unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
    parse_report(format, &text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn series(got: &[Measurement]) -> BTreeSet<(&str, &str)> {
    got.iter()
        .map(|m| (m.benchmark.as_str(), m.metric.as_str()))
        .collect()
}

/// (file, format, measurements, distinct benchmarks).
const COUNTS: &[(&str, Format, usize, usize)] = &[
    // 102 benchmarks, 98 with a throughput line; every `change:` block skipped.
    (
        "criterion/fibre-cache-benches.txt",
        Format::Criterion,
        200,
        102,
    ),
    (
        "criterion/fibre-cache-benches_2.txt",
        Format::Criterion,
        200,
        102,
    ),
    (
        "criterion/bencher-criterion-throughput.txt",
        Format::Criterion,
        4,
        2,
    ),
    // 5 param sets × 4 modes: 20 series, not 5.
    ("jmh/hollow-resharding-all-modes.json", Format::Jmh, 170, 20),
    ("jmh/jcasbin-enforce-9fbceefa.json", Format::Jmh, 258, 86),
    ("jmh/jcasbin-enforce-0b7774d9.json", Format::Jmh, 111, 37),
    ("jmh/bencher-jmh-throughput.json", Format::Jmh, 3, 1),
    // bent's lower-case names: 102 result lines, every one kept.
    ("go/perf-bent-BaseNl.benchdwarf.txt", Format::Go, 102, 102),
    ("go/perf-bent-TipNl.benchdwarf.txt", Format::Go, 102, 102),
    ("hyperfine/1brc-hyperfine.json", Format::Hyperfine, 6, 2),
    ("bmf/bencher-report_dhat.json", Format::Bmf, 6, 1),
    // One of three benchmarks failed: two kept, with time and allocation each.
    (
        "dotnet/needlr-keyed-null-statistics.json",
        Format::Dotnet,
        12,
        2,
    ),
];

#[test]
fn formats_real_files_parse_with_their_counts() {
    let mut failures = Vec::new();
    for (file, format, measurements, benchmarks) in COUNTS {
        let got = report(*format, file).measurements;
        let names: BTreeSet<&str> = got.iter().map(|m| m.benchmark.as_str()).collect();
        if (got.len(), names.len()) != (*measurements, *benchmarks) {
            failures.push(format!(
                "{file}: {} measurements of {} benchmarks, expected {measurements} of {benchmarks}",
                got.len(),
                names.len()
            ));
        }
        if let Some(bad) = got
            .iter()
            .find(|m| !(m.value.is_finite() && m.value >= 0.0))
        {
            failures.push(format!("{file}: implausible {bad:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (file, format, benchmark, metric, unit, direction): one row per format and metric kind.
#[rustfmt::skip]
const DIRECTIONS: &[(&str, Format, &str, &str, &str, Direction)] = &[
    ("criterion/fibre-cache-benches.txt", Format::Criterion, "AsyncBasicOps/Op-GetHit_Cap-10000_Items-10000_Tasks-4", "time", "ns", LowerIsBetter),
    ("criterion/fibre-cache-benches.txt", Format::Criterion, "AsyncBasicOps/Op-GetHit_Cap-10000_Items-10000_Tasks-4", "throughput", "elem/s", HigherIsBetter),
    ("jmh/jcasbin-enforce-0b7774d9.json", Format::Jmh, "org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce [thrpt] (dataScale=small, modelType=rbac, useCache=false)", "throughput", "ops/s", HigherIsBetter),
    ("jmh/hollow-resharding-all-modes.json", Format::Jmh, "com.netflix.hollow.core.read.engine.object.HollowObjectTypeReadStateReshardingBenchmark.testReadString [avgt] (countStrings=500, countStringsDb=100000, deltaChanges=2000, maxStringLength=5, shardSizeMBs=1)", "time", "ns", LowerIsBetter),
    ("jmh/hollow-resharding-all-modes.json", Format::Jmh, "com.netflix.hollow.core.read.engine.object.HollowObjectTypeReadStateReshardingBenchmark.testReadString [ss] (countStrings=500, countStringsDb=100000, deltaChanges=2000, maxStringLength=5, shardSizeMBs=1)", "time", "ns", LowerIsBetter),
    ("go/perf-bent-BaseNl.benchdwarf.txt", Format::Go, "Benchmarkuber_zap_dwarf_input_goodness", "inputs-quality", "inputs-quality", LowerIsBetter),
    ("hyperfine/1brc-hyperfine.json", Format::Hyperfine, "cargo run --release --bin 1brc measurements_1000000000.txt", "wall_time", "ns", LowerIsBetter),
    ("bmf/bencher-report_dhat.json", Format::Bmf, "bench_play_game", "Total Bytes", "", LowerIsBetter),
    ("dotnet/needlr-keyed-null-statistics.json", Format::Dotnet, "NexusLabs.Needlr.Benchmarks.Benchmarks.KeyedServiceResolutionBenchmarks.ManualDI_ResolveKeyed", "time", "ns", LowerIsBetter),
    ("dotnet/needlr-keyed-null-statistics.json", Format::Dotnet, "NexusLabs.Needlr.Benchmarks.Benchmarks.KeyedServiceResolutionBenchmarks.ManualDI_ResolveKeyed", "bytes_per_op", "bytes", LowerIsBetter),
];

#[test]
fn formats_real_files_state_each_metrics_direction() {
    for (file, format, benchmark, metric, unit, direction) in DIRECTIONS {
        let got = report(*format, file).measurements;
        let found: Vec<&Measurement> = got
            .iter()
            .filter(|m| m.benchmark == *benchmark && m.metric == *metric)
            .collect();
        assert!(
            !found.is_empty(),
            "{file}: no {benchmark} {metric} in {:?}",
            series(&got)
        );
        for m in found {
            assert_eq!(
                (m.unit.as_str(), m.direction),
                (*unit, *direction),
                "{file}: {m:?}"
            );
        }
    }
}

#[test]
fn formats_real_criterion_change_blocks_are_skipped_and_values_kept() {
    let got = report(Format::Criterion, "criterion/fibre-cache-benches.txt").measurements;
    // `time: [954.24 µs 960.99 µs 969.58 µs]`, then `thrpt:` in Melem/s, then a change block.
    let tasks4: Vec<&Measurement> = got
        .iter()
        .filter(|m| m.benchmark == "AsyncBasicOps/Op-GetHit_Cap-10000_Items-10000_Tasks-4")
        .collect();
    assert_eq!(tasks4.len(), 2, "{tasks4:?}");
    assert_eq!(tasks4[0].value, 960.99e3);
    assert_eq!(
        (tasks4[0].lower, tasks4[0].upper),
        (Some(954.24e3), Some(969.58e3))
    );
    assert_eq!(tasks4[1].value, 10.406e6);
}

#[test]
fn formats_real_jmh_modes_and_params_are_separate_series() {
    let got = report(Format::Jmh, "jmh/hollow-resharding-all-modes.json").measurements;
    let modes: BTreeSet<&str> = got
        .iter()
        .filter_map(|m| m.benchmark.split(" [").nth(1)?.split(']').next())
        .collect();
    assert_eq!(
        modes.into_iter().collect::<Vec<_>>(),
        ["avgt", "sample", "ss", "thrpt"]
    );
    // thrpt in ops/ms becomes ops/s: 47.896… ops/ms is the first iteration.
    let first = &got[0];
    assert_eq!(first.metric, "throughput");
    assert!(
        (first.value - 47_896.326_944_146_53).abs() < 1e-6,
        "{first:?}"
    );
    // Two runs of one suite at two commits share their series names.
    let old = report(Format::Jmh, "jmh/jcasbin-enforce-9fbceefa.json").measurements;
    let new = report(Format::Jmh, "jmh/jcasbin-enforce-0b7774d9.json").measurements;
    let (old, new) = (series(&old), series(&new));
    assert!(new.intersection(&old).count() >= 30, "{new:?}");
}

#[test]
fn formats_real_dotnet_failed_benchmark_is_a_warning_naming_it() {
    let parsed = report(Format::Dotnet, "dotnet/needlr-keyed-null-statistics.json");
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert!(
        parsed.warnings[0].contains(
            "`NexusLabs.Needlr.Benchmarks.Benchmarks.KeyedServiceResolutionBenchmarks.Needlr_Reflection_ResolveKeyed`"
        ),
        "{}",
        parsed.warnings[0]
    );
    // Zero bytes allocated is a real counter value and is kept.
    assert!(
        parsed
            .measurements
            .iter()
            .any(|m| m.metric == "bytes_per_op" && m.value == 0.0)
    );
}

#[test]
fn formats_dotnet_jobs_are_separate_series_and_params_appear_once() {
    // Shaped like BenchmarkDotNet's export of one method under two runtimes (no real
    // multi-job JSON export was found; see the README).
    let text = r#"{"Benchmarks":[
      {"Namespace":"N","Type":"T","Method":"M","Parameters":"Size=10&Kind=a",
       "FullName":"N.T.M(Size: 10, Kind: a)","DisplayInfo":"T.M: .NET 8.0(Runtime=.NET 8.0) [Size=10, Kind=a]",
       "Statistics":{"OriginalValues":[1.0,2.0]}},
      {"Namespace":"N","Type":"T","Method":"M","Parameters":"Size=10&Kind=a",
       "FullName":"N.T.M(Size: 10, Kind: a)","DisplayInfo":"T.M: .NET 9.0(Runtime=.NET 9.0) [Size=10, Kind=a]",
       "Statistics":{"OriginalValues":[3.0]}},
      {"Namespace":"N","Type":"T","Method":"M","Parameters":"","DisplayInfo":"T.M: Job-ABCDEF(Runtime=.NET 10.0)",
       "Statistics":{"OriginalValues":[4.0]}}]}"#;
    let got = parse_report(Format::Dotnet, text).unwrap().measurements;
    let names: Vec<&str> = got.iter().map(|m| m.benchmark.as_str()).collect();
    assert_eq!(
        names,
        [
            "N.T.M(Size=10, Kind=a) [.NET 8.0(Runtime=.NET 8.0)]",
            "N.T.M(Size=10, Kind=a) [.NET 8.0(Runtime=.NET 8.0)]",
            "N.T.M(Size=10, Kind=a) [.NET 9.0(Runtime=.NET 9.0)]",
            // A generated job id changes every run; its settings name it instead.
            "N.T.M [Runtime=.NET 10.0]",
        ]
    );
}

#[test]
fn formats_catch2_rows_in_minutes_are_read() {
    // Catch2 switches to minutes (`m`) for long benchmarks; such rows were dropped silently.
    let text = "\
benchmark name                       samples       iterations    estimated
                                     mean          low mean      high mean
                                     std dev       low std dev   high std dev
-------------------------------------------------------------------------------
slow                                           10             1     2.5 m
                                         1.5 m         1.4 m         1.6 m
                                        3.2 s         2.1 s         5.3 s
";
    let got = parse_report(Format::Catch2, text).unwrap().measurements;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].value, got[0].lower, got[0].upper),
        (90e9, Some(84e9), Some(96e9))
    );
}

#[test]
fn formats_criterion_directory_is_read_through_the_results_path() {
    // A whole target/criterion tree, one benchmark's directory, and one baseline directory.
    let tree = Path::new(BENCH).join("criterion/deduplicate");
    let parsed = read_results_path(Format::Auto, &tree).unwrap();
    assert_eq!(parsed.format, Format::Criterion);
    assert_eq!(parsed.measurements.len(), 200);
    let bench = Path::new(BENCH).join("criterion/fib/fib20-fast");
    let one = read_results_path(Format::Criterion, &bench)
        .unwrap()
        .measurements;
    assert!(
        one.iter().all(|m| m.benchmark == "fib 20 - fast"),
        "{:?}",
        &one[..1]
    );
    let baseline = bench.join(CRITERION_LATEST);
    let same = read_results_path(Format::Criterion, &baseline)
        .unwrap()
        .measurements;
    assert_eq!(one, same);
    // A directory for another format is refused with the path.
    let err = read_results_path(Format::Go, &tree)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected a file"), "{err}");
    // A file goes through the format's parser.
    let file = Path::new(REAL).join("hyperfine/1brc-hyperfine.json");
    assert_eq!(
        read_results_path(Format::Auto, &file)
            .unwrap()
            .measurements
            .len(),
        6
    );
}
