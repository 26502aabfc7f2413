//! Behaviour not covered by the fixture files: format names, Catch2 XML, sample order,
//! unit normalisation.

use benchgate_harness::formats::{Format, Measurement, command, detect, metric, parse, unit};

#[test]
fn formats_names_round_trip_and_unknown_names_list_the_valid_ones() {
    for format in Format::ALL {
        assert_eq!(format.to_string().parse::<Format>(), Ok(format));
    }
    assert_eq!(" Criterion ".parse::<Format>(), Ok(Format::Criterion));
    let err = "nextest".parse::<Format>().unwrap_err().to_string();
    assert!(
        err.starts_with("unknown benchmark format `nextest`; expected one of: auto, libtest,"),
        "{err}"
    );
    // Every format is listed, so the message never falls behind the enum.
    for format in Format::ALL {
        assert!(
            err.contains(format.as_str()),
            "{format} missing from: {err}"
        );
    }
}

#[test]
fn formats_command_metric_names_are_the_documented_ones() {
    assert_eq!(
        (command::WALL_TIME, command::WALL_TIME_UNIT),
        ("wall_time", "ns")
    );
    assert_eq!(
        (command::CPU_TIME, command::CPU_TIME_UNIT),
        ("cpu_time", "ns")
    );
    assert_eq!(
        (command::PEAK_RSS, command::PEAK_RSS_UNIT),
        ("peak_rss", "bytes")
    );
}

fn m(benchmark: &str, value: f64, lower: Option<f64>, upper: Option<f64>) -> Measurement {
    Measurement {
        benchmark: benchmark.into(),
        metric: metric::TIME.into(),
        unit: unit::NS.into(),
        value,
        lower,
        upper,
        direction: Default::default(),
        run: None,
    }
}

#[test]
fn formats_catch2_xml_v3_and_v2_with_sections_and_escapes() {
    let v3 = r#"<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="bench" rng-seed="1" catch2-version="3.4.0">
  <TestCase name="Fibonacci" filename="bench.cpp" line="5">
    <BenchmarkResults name="Fib 20" samples="100" resamples="100000" iterations="2" clockResolution="17" estimatedDuration="8371200">
      <!-- All values in nano seconds -->
      <mean value="41731" lowerBound="41250" upperBound="42622" ci="0.95"/>
      <standardDeviation value="3256" lowerBound="2163" upperBound="5353" ci="0.95"/>
      <outliers variance="0.7" lowMild="0" lowSevere="0" highMild="1" highSevere="2"/>
    </BenchmarkResults>
    <Section name="with &quot;quotes&quot; &amp; more">
      <BenchmarkResults name="Fib 5" samples="100" iterations="1961">
        <mean value="36" lowerBound="35" upperBound="37" ci="0.95"/>
      </BenchmarkResults>
    </Section>
    <OverallResult success="true"/>
  </TestCase>
</Catch2TestRun>
"#;
    assert_eq!(detect(v3), Ok(Format::Catch2));
    assert_eq!(
        parse(Format::Auto, v3).unwrap(),
        vec![
            m("Fibonacci / Fib 20", 41731.0, Some(41250.0), Some(42622.0)),
            m(
                "Fibonacci / with \"quotes\" & more / Fib 5",
                36.0,
                Some(35.0),
                Some(37.0)
            ),
        ]
    );
    let v2 = r#"<Catch name="bench"><Group name="bench">
      <TestCase name="read"><BenchmarkResults name="5k.json" samples="100">
        <mean value="445059"/>
      </BenchmarkResults></TestCase></Group></Catch>"#;
    assert_eq!(
        parse(Format::Catch2, v2).unwrap(),
        vec![m("read / 5k.json", 445059.0, None, None)]
    );
}

#[test]
fn formats_go_count_runs_stay_in_order_and_single_package_names_stay_short() {
    let text = "pkg: example.com/p\nBenchmarkA-8  10  100 ns/op\nBenchmarkB-8  10  7 ns/op\nBenchmarkA-8  10  110 ns/op\n";
    let got = parse(Format::Go, text).unwrap();
    let a: Vec<f64> = got
        .iter()
        .filter(|m| m.benchmark == "BenchmarkA-8")
        .map(|m| m.value)
        .collect();
    assert_eq!(a, [100.0, 110.0]);
    // Test logs that merely start with "Benchmark" are not results.
    assert_eq!(
        parse(Format::Go, "Benchmarking is fun\nBenchmarkX\n").unwrap(),
        vec![]
    );
}

#[test]
fn formats_criterion_throughput_is_normalised_to_bytes_and_elements_per_second() {
    let text = "\
parse/json              time:   [1.0000 µs 1.1000 µs 1.2000 µs]
                        thrpt:  [1.0000 GiB/s 1.5000 GiB/s 2.0000 GiB/s]
count                   time:   [10.000 ms 11.000 ms 12.000 ms]
                        thrpt:  [2.0000 Kelem/s 3.0000 Kelem/s 4.0000 Kelem/s]
";
    let got = parse(Format::Criterion, text).unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], m("parse/json", 1100.0, Some(1000.0), Some(1200.0)));
    let gib = 1024.0 * 1024.0 * 1024.0;
    assert_eq!(
        (
            got[1].metric.as_str(),
            got[1].unit.as_str(),
            got[1].value,
            got[1].lower
        ),
        ("throughput", "bytes/s", 1.5 * gib, Some(gib))
    );
    assert_eq!(got[2].value, 11e6);
    assert_eq!((got[3].unit.as_str(), got[3].value), ("elem/s", 3000.0));
}

#[test]
fn formats_raw_numbers_with_and_without_units() {
    let got = parse(Format::Raw, "# runs\n12.5\n\n3 ms\n2 KiB\n7 widgets\n").unwrap();
    let summary: Vec<(&str, &str, f64)> = got
        .iter()
        .map(|m| (m.metric.as_str(), m.unit.as_str(), m.value))
        .collect();
    assert_eq!(
        summary,
        [
            ("value", "", 12.5),
            ("time", "ns", 3e6),
            ("size", "bytes", 2048.0),
            ("value", "widgets", 7.0)
        ]
    );
    assert!(got.iter().all(|m| m.benchmark == "raw"));
    assert_eq!(detect("1\n2\n3\n"), Ok(Format::Raw));
}

#[test]
fn formats_jmh_time_mode_and_gc_profiler_are_normalised() {
    let text = r#"[{"benchmark":"b.M.run","mode":"avgt","params":{"size":"10"},
        "primaryMetric":{"score":2.0,"scoreUnit":"us/op","scoreConfidence":[1.5,2.5],"rawData":[[1.9,2.1],[2.0]]},
        "secondaryMetrics":{"\u00b7gc.alloc.rate.norm":{"score":48.0,"scoreUnit":"B/op","rawData":[[48.0]]},
                            "\u00b7gc.count":{"score":"NaN","scoreUnit":"counts"}}}]"#;
    let got = parse(Format::Auto, text).unwrap();
    let summary: Vec<(&str, &str, f64)> = got
        .iter()
        .map(|m| (m.metric.as_str(), m.unit.as_str(), m.value))
        .collect();
    assert_eq!(
        summary,
        [
            ("time", "ns", 1900.0),
            ("time", "ns", 2100.0),
            ("time", "ns", 2000.0),
            ("bytes_per_op", "bytes", 48.0)
        ]
    );
    assert!(
        got.iter()
            .all(|m| m.benchmark == "b.M.run [avgt] (size=10)")
    );
}
