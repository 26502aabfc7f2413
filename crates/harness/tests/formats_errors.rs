//! Malformed input gives an error that names the format, the line or field, and what was
//! expected; no input makes a parser panic.

use benchgate_harness::formats::{Format, ParseError, criterion_samples, parse, parse_report};

/// (format, input, the whole error message).
const MALFORMED: &[(Format, &str, &str)] = &[
    (
        Format::Libtest,
        "test a ... bench:   abc ns/iter (+/- 5)",
        "libtest output, line 1, column 21: expected a number after `bench:`, found \"abc\"",
    ),
    (
        Format::Libtest,
        "\ntest a ... bench: 12",
        "libtest output, line 2, column 18: expected a unit such as `ns/iter` after 12",
    ),
    (
        Format::Libtest,
        "test a ... bench: 12 ns/iter (+/- many)",
        "libtest output, line 1, column 35: expected a number after `(+/-`, found \"many\"",
    ),
    (
        Format::Criterion,
        "x   time:   [1.0 ns 2.0 ns]",
        "criterion output, line 1, column 14: expected three values with units inside `[…]`, found 4 tokens",
    ),
    (
        Format::Criterion,
        "x   time:   [1.0 ns 2.0 parsecs 3.0 ns]",
        "criterion output, line 1, column 25: expected a time unit (ps, ns, µs, ms, s), found \"parsecs\"",
    ),
    (
        Format::Criterion,
        "x   time:   [1.0 ns 2.0 ns 3.0 ns",
        "criterion output, line 1, column 14: expected `]` closing the interval",
    ),
    (
        Format::Criterion,
        "    thrpt:  [1 GiB/s 2 GiB/s 3 GiB/s]",
        "criterion output, line 1: expected a `time:` line before `thrpt:`",
    ),
    (
        Format::Criterion,
        "x   time:   [1 ns 2 ns 3 ns]\n    thrpt:  [1 GiB/s 2 furlongs/s 3 GiB/s]",
        "criterion output, line 2, column 24: expected a throughput unit such as MiB/s or Kelem/s, found \"furlongs/s\"",
    ),
    (
        Format::Go,
        "BenchmarkX-8   100   abc ns/op",
        "go output, line 1, column 22: expected a number, found \"abc\"",
    ),
    (
        Format::Go,
        "pkg: p\nBenchmarkX-8   100   12",
        "go output, line 2, column 22: expected a unit after 12",
    ),
    (
        Format::Go,
        "BenchmarkX-8   100",
        "go output, line 1: expected a value and unit (such as `325 ns/op`) after the iteration count",
    ),
    (
        Format::Hyperfine,
        r#"{"results":[{"command":"a","times":[0.1,"x"]}]}"#,
        "hyperfine output, field `results[0].times[1]`: expected a number, found a string",
    ),
    (
        Format::Hyperfine,
        r#"{"results":[{"command":"a","times":[0.1],"exit_codes":[1]}]}"#,
        "hyperfine output, field `results[0].exit_codes[0]`: expected exit code 0, found 1: a failed run of `a` is not a sample",
    ),
    (
        Format::Hyperfine,
        r#"{"result":[]}"#,
        "hyperfine output, field `$`: expected a member `results`",
    ),
    (
        Format::Hyperfine,
        "{\n  \"results\": [",
        "hyperfine output, line 2, column 14: expected valid JSON (EOF while parsing a list)",
    ),
    (
        Format::Google,
        r#"{"benchmarks":[{"name":"a","real_time":1,"time_unit":"fortnights"}]}"#,
        "google output, field `benchmarks[0]`: expected `time_unit` to be ns, us, ms or s, found \"fortnights\"",
    ),
    (
        Format::Google,
        r#"{"benchmarks":[{"name":"a_stddev","run_type":"aggregate","aggregate_name":"stddev","real_time":1}]}"#,
        "google output, field `benchmarks`: expected individual runs or mean/median aggregates, found only other aggregates (stddev, cv, BigO, RMS)",
    ),
    (
        Format::Google,
        r#"{"benchmarks":[{"name":"a","error_occurred":true,"error_message":"boom"}]}"#,
        "google output, field `benchmarks[0]`: benchmark `a` reported an error: boom",
    ),
    (
        Format::Pytest,
        r#"{"benchmarks":[{"name":"t","fullname":"f.py::t"}]}"#,
        "pytest output, field `benchmarks[0]`: expected a member `stats`",
    ),
    (
        Format::Jmh,
        r#"{"benchmark":"a"}"#,
        "jmh output, field `$`: expected an array, found an object",
    ),
    (
        Format::Bmf,
        r#"{"a":{"latency":{"value":"fast"}}}"#,
        "bmf output, field `a.latency.value`: expected a number, found a string",
    ),
    (
        Format::Catch2,
        "benchmark name  samples\n mean\n std dev\n-------------------------------\nFib 10     100    208    7.1 ms\n   garbage here\n",
        "catch2 output, line 6: expected three times (mean, low mean, high mean) such as `344 ns 341 ns 349 ns`",
    ),
    (
        Format::Catch2,
        "<Catch2TestRun><TestCase name=\"t\"><BenchmarkResults name=\"b\"></BenchmarkResults></TestCase></Catch2TestRun>",
        "catch2 output, line 1, column 35: expected a <mean> inside <BenchmarkResults name=\"b\">",
    ),
    (
        Format::Catch2,
        "<Catch2TestRun><TestCase name=\"t\">\n<BenchmarkResults name=\"b\"><mean value=\"x\"/>",
        "catch2 output, line 2, column 28: expected a number in `value`, found \"x\"",
    ),
    (
        Format::Catch2,
        "<Catch2TestRun>\n  <TestCase name=\"t\"></Oops>",
        "catch2 output, line 2, column 22: expected well-formed XML (ill-formed document: expected `</TestCase>`, but `</Oops>` was found)",
    ),
    (
        Format::Catch2,
        "<html></html>",
        "catch2 output, line 1, column 1: expected Catch2 XML (a <Catch2TestRun> or <Catch> root element)",
    ),
    (
        Format::Raw,
        "1\n2\nabc\n",
        "raw output, line 3, column 1: expected a number, found \"abc\"",
    ),
    (
        Format::Raw,
        "12 ms extra",
        "raw output, line 1, column 7: expected one number and an optional unit, found more: \"extra\"",
    ),
    (
        Format::Command,
        "",
        "command output, input: the `command` format is measured by the runner (wall time, CPU time, peak RSS); there is no output to parse",
    ),
    (
        Format::Auto,
        "  \n",
        "no known format (--format auto), input: expected benchmark output, found nothing (empty, or only white space)",
    ),
    // Values the statistics cannot hold are refused where they are written.
    (
        Format::Go,
        "BenchmarkX-8   100   1.7e308 ns/op",
        "go output, line 1, column 22: expected a number no larger than 1e300, found 1.7e308",
    ),
    (
        Format::Go,
        "BenchmarkX-8   100   -3 ns/op",
        "go output, line 1, column 22: expected a non-negative number (a time, size, count or rate), found -3",
    ),
    (
        Format::Libtest,
        "test a ... bench: 1e305 s/iter",
        "libtest output, line 1, column 19: expected a finite number, found inf",
    ),
    (
        Format::Criterion,
        "x   time:   [1.0 ns -2.0 ns 3.0 ns]",
        "criterion output, line 1, column 26: expected a non-negative number (a time, size, count or rate), found -2",
    ),
    (
        Format::Catch2,
        "benchmark name  samples  iterations  estimated\n  mean  low mean  high mean\n  std dev  low std dev  high std dev\n--------------------------------------------------\nF 20   100   2   8.3 ms\n   -41.7 us   41.2 us   42.6 us\n   3.2 us   2.1 us   5.3 us\n",
        "catch2 output, line 6, column 4: expected a non-negative number (a time, size, count or rate), found -41700",
    ),
    (
        Format::Hyperfine,
        r#"{"results":[{"command":"a","times":[0.1,-0.2]}]}"#,
        "hyperfine output, field `results[0].times[1]`: expected a non-negative number (a time, size, count or rate), found -0.2",
    ),
    (
        Format::Google,
        r#"{"benchmarks":[{"name":"a","real_time":1e299,"time_unit":"s"}]}"#,
        "google output, field `benchmarks[0].real_time`: expected a number no larger than 1e300, found 1e308",
    ),
    (
        Format::Pytest,
        r#"{"benchmarks":[{"name":"a","stats":{"mean":-1.0}}]}"#,
        "pytest output, field `benchmarks[0].stats.mean`: expected a non-negative number (a time, size, count or rate), found -1",
    ),
    (
        Format::Dotnet,
        r#"{"Benchmarks":[{"Method":"M","Statistics":{"OriginalValues":[1.0,2e301]}}]}"#,
        "dotnet output, field `Benchmarks[0].Statistics.OriginalValues[1]`: expected a number no larger than 1e300, found 2e301",
    ),
    (
        Format::Jmh,
        r#"[{"benchmark":"b","mode":"thrpt","primaryMetric":{"score":1,"scoreUnit":"ops/ns","rawData":[[1e292]]}}]"#,
        "jmh output, field `[0].primaryMetric.rawData[0][0]`: expected a number no larger than 1e300, found 1e301",
    ),
    (
        Format::Bmf,
        r#"{"b":{"latency":{"value":-5}}}"#,
        "bmf output, field `b.latency.value`: expected a non-negative number (a time, size, count or rate), found -5",
    ),
    // Only criterion's results come as a directory (checked in formats_fixtures.rs); a JSON
    // array of a wrong shape for criterion's sample.json names its field.
];

#[test]
fn formats_malformed_inputs_name_format_place_and_expectation() {
    let mut failures = Vec::new();
    for (format, input, expected) in MALFORMED {
        match parse(*format, input) {
            Ok(got) => failures.push(format!("{format} {input:?}: parsed as {got:?}")),
            Err(err) => {
                if err.to_string() != *expected {
                    failures.push(format!(
                        "{format} {input:?}:\n  got      {err}\n  expected {expected}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn formats_criterion_sample_json_errors_name_the_field() {
    let err = criterion_samples("b", r#"{"iters":[1.0,2.0],"times":[5.0]}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "criterion output, field `times`: expected as many times as iters (2), found 1"
    );
    let err = criterion_samples("b", r#"{"iters":[0.0],"times":[5.0]}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "criterion output, field `iters[0]`: expected a positive iteration count, found 0"
    );
}

/// Fixture texts to garble: real output, so mutations stay close to what parsers see.
fn fixture_texts() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bench");
    let real = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real");
    let real_files = [
        "criterion/bencher-criterion-throughput.txt",
        "go/perf-bent-BaseNl.benchdwarf.txt",
        "jmh/bencher-jmh-throughput.json",
        "dotnet/needlr-keyed-null-statistics.json",
        "hyperfine/1brc-hyperfine.json",
        "bmf/bencher-report_dhat.json",
    ]
    .map(|f| std::fs::read_to_string(format!("{real}/{f}")).expect("real fixture"));
    [
        "libtest/bencher-rust-bench-many.txt",
        "criterion/bencher-criterion-console-many.txt",
        "go/gab-go_fiber_duplicate_names_output.txt",
        "hyperfine/bencher-hyperfine-two.json",
        "google-benchmark/gbench-compare-test1_run1.json",
        "pytest-benchmark/bencher-pytest-two.json",
        "catch2/bencher-catch2-issue_351.txt",
        "benchmarkdotnet/bencher-dotnet-two.json",
        "jmh/bencher-jmh-six.json",
        "bmf/bencher-report_bmf_mixed.json",
        "benchstat/expected.crcOldNew.stdout",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(format!("{root}/{f}")).expect("fixture"))
    .chain([CATCH2_XML.to_string()])
    .chain(real_files)
    .collect()
}

const CATCH2_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="bench" catch2-version="3.4.0">
  <TestCase name="Fibonacci">
    <BenchmarkResults name="Fib 20" samples="100" iterations="2">
      <mean value="41731" lowerBound="41250" upperBound="42622" ci="0.95"/>
    </BenchmarkResults>
  </TestCase>
</Catch2TestRun>
"#;

/// Every parser must refuse what the statistics cannot hold, so whatever parses is finite,
/// non-negative and at most 1e300.
fn try_every_format(text: &str) {
    for format in Format::ALL {
        let result: Result<_, ParseError> = parse(format, text);
        if let Ok(measurements) = result {
            for m in &measurements {
                assert!(
                    m.value.is_finite() && m.value >= 0.0 && m.value <= 1e300,
                    "{format}: {m:?} from {text:?}"
                );
            }
        }
        // The report path (warnings, skipped items) must hold to the same.
        if let Ok(parsed) = parse_report(format, text) {
            assert!(
                parsed
                    .measurements
                    .iter()
                    .all(|m| m.value.is_finite() && m.value >= 0.0),
                "{format} report: {text:?}"
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn formats_random_text_never_panics(text in "\\PC*") {
        try_every_format(&text);
    }

    #[test]
    fn formats_random_lines_of_harness_tokens_never_panic(
        lines in proptest::collection::vec(
            "(test |Benchmark|time: +\\[|thrpt: +\\[|bench: |pkg: |-{20,30}|benchmark name|<Catch2TestRun>|<mean value=\"|[0-9., ]{0,8}|ns/iter|ns/op|ns|µs|\\]|\\(\\+/- |[{}\\[\\]\":,]|[a-z ]{0,6})+",
            0..12,
        )
    ) {
        try_every_format(&lines.join("\n"));
    }

    #[test]
    fn formats_garbled_real_output_never_panics(
        which in 0usize..18,
        cut in 0usize..40_000,
        at in 0usize..40_000,
        insert in "\\PC{0,4}",
    ) {
        let texts = fixture_texts();
        let text = &texts[which % texts.len()];
        let boundary = |i: usize| (0..=i.min(text.len())).rev().find(|&b| text.is_char_boundary(b)).unwrap_or(0);
        let (cut, at) = (boundary(cut), boundary(at));
        // Truncate the text, and separately splice random characters into it.
        try_every_format(&text[..cut]);
        let spliced = format!("{}{insert}{}", &text[..at], &text[at..]);
        try_every_format(&spliced);
    }
}
