//! Properties of "the run is the unit" for every format whose files carry repetitions: values
//! inside one run are not replicates, so their order never changes a verdict, and repeating one
//! run's values never narrows an interval (it adds no run). The files are written in each
//! harness's own shape (pyperf runs, JMH forks, BenchmarkDotNet launches, `go test -count`
//! lines, criterion samples) and read by the real parsers, as `analyze` reads them.

use benchgate_api::{BenchmarkResult, Measurement};
use benchgate_harness::evaluate::{Policy, RunsTuning, evaluate_runs};
use benchgate_harness::formats::{Format, criterion_samples, parse};
use benchgate_harness::samples::RecordedRuns;
use proptest::prelude::*;

/// Per side: the runs, each with its values (ns).
type Runs = Vec<Vec<f64>>;

#[derive(Debug, Clone, Copy)]
enum Shape {
    Pyperf,
    Jmh,
    Dotnet,
    Go,
    Criterion,
}

const SHAPES: [Shape; 5] = [
    Shape::Pyperf,
    Shape::Jmh,
    Shape::Dotnet,
    Shape::Go,
    Shape::Criterion,
];

fn list(values: &[f64]) -> String {
    let v: Vec<String> = values.iter().map(|x| format!("{x:?}")).collect();
    v.join(",")
}

/// The recordings of one side in `shape`: formats with runs inside one file give one file;
/// those whose file is one process (go, criterion) give a file per run.
fn recordings(shape: Shape, runs: &Runs) -> Vec<Vec<Measurement>> {
    let one = |format: Format, text: String| parse(format, &text).unwrap();
    match shape {
        Shape::Pyperf => {
            let runs: Vec<String> = runs
                .iter()
                .map(|r| {
                    let secs: Vec<f64> = r.iter().map(|v| v / 1e9).collect();
                    format!("{{\"values\":[{}]}}", list(&secs))
                })
                .collect();
            vec![one(
                Format::Pyperf,
                format!(
                    "{{\"benchmarks\":[{{\"metadata\":{{\"name\":\"b\"}},\"runs\":[{}]}}],\
                     \"metadata\":{{\"unit\":\"second\"}},\"version\":\"1.0\"}}",
                    runs.join(",")
                ),
            )]
        }
        Shape::Jmh => {
            let forks: Vec<String> = runs.iter().map(|r| format!("[{}]", list(r))).collect();
            vec![one(
                Format::Jmh,
                format!(
                    "[{{\"benchmark\":\"p.B.m\",\"mode\":\"avgt\",\"primaryMetric\":{{\"score\":1.0,\
                     \"scoreUnit\":\"ns/op\",\"rawData\":[{}]}}}}]",
                    forks.join(",")
                ),
            )]
        }
        Shape::Dotnet => {
            let mut ms = Vec::new();
            let mut values = Vec::new();
            for (launch, r) in runs.iter().enumerate() {
                for (i, v) in r.iter().enumerate() {
                    values.push(*v);
                    ms.push(format!(
                        "{{\"IterationMode\":\"Workload\",\"IterationStage\":\"Result\",\
                         \"LaunchIndex\":{},\"IterationIndex\":{},\"Operations\":1,\
                         \"Nanoseconds\":{v:?}}}",
                        launch + 1,
                        i + 1
                    ));
                }
            }
            vec![one(
                Format::Dotnet,
                format!(
                    "{{\"Benchmarks\":[{{\"Namespace\":\"N\",\"Type\":\"T\",\"Method\":\"M\",\
                     \"Parameters\":\"\",\"Statistics\":{{\"OriginalValues\":[{}],\"Mean\":1.0}},\
                     \"Measurements\":[{}]}}]}}",
                    list(&values),
                    ms.join(",")
                ),
            )]
        }
        Shape::Go => runs
            .iter()
            .map(|r| {
                let lines: Vec<String> = r
                    .iter()
                    .map(|v| format!("BenchmarkParse-2 \t 1000 \t {v:?} ns/op"))
                    .collect();
                one(Format::Go, format!("{}\nPASS\n", lines.join("\n")))
            })
            .collect(),
        Shape::Criterion => runs
            .iter()
            .map(|r| {
                let iters: Vec<f64> = r.iter().map(|_| 10.0).collect();
                let times: Vec<f64> = r.iter().map(|v| v * 10.0).collect();
                let json = format!(
                    "{{\"sampling_mode\":\"Linear\",\"iters\":[{}],\"times\":[{}]}}",
                    list(&iters),
                    list(&times)
                );
                criterion_samples("parse", &json).unwrap()
            })
            .collect(),
    }
}

fn row(shape: Shape, base: &Runs, head: &Runs) -> BenchmarkResult {
    let runs = RecordedRuns::from_recordings(&recordings(shape, base), &recordings(shape, head));
    let policy = Policy {
        alpha: 0.05,
        n_star: 20.0,
        min_effect_pct: 1.0,
        tolerance: None,
        rules: Vec::new(),
        planned: Default::default(),
        assume_equal_spread: false,
        rare_slow_runs: None,
        gate_on: Default::default(),
    };
    let eval = evaluate_runs(
        &runs,
        &policy,
        &Default::default(),
        RunsTuning::RecordedRuns,
    );
    assert_eq!(eval.results.len(), 1, "{shape:?}: {:?}", eval.results);
    eval.results[0].clone()
}

fn width(r: &BenchmarkResult) -> f64 {
    match r.interval_pct {
        [Some(lo), Some(hi)] => hi - lo,
        _ => f64::INFINITY,
    }
}

/// Runs of one side: 2 to 6 runs of 1 to 5 values, each run with its own level (runs differ
/// more than the values inside one do, as on a real machine).
fn side(level: f64) -> impl Strategy<Value = Runs> {
    prop::collection::vec(
        (-0.1f64..0.1, prop::collection::vec(-0.01f64..0.01, 1..6)),
        2..7,
    )
    .prop_map(move |runs| {
        runs.into_iter()
            .map(|(run, values)| {
                values
                    .into_iter()
                    .map(|v| (1000.0 * level * (run + v).exp()).round() / 8.0)
                    .collect()
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_order_of_values_inside_a_run_never_changes_the_row(
        base in side(1.0),
        head in side(1.1),
        seed in any::<u64>(),
    ) {
        for shape in SHAPES {
            let original = row(shape, &base, &head);
            // A deterministic shuffle of each run: rotate and reverse by the seed.
            let shuffle = |runs: &Runs| -> Runs {
                runs.iter()
                    .map(|r| {
                        let mut r = r.clone();
                        let by = (seed as usize) % r.len();
                        r.rotate_left(by);
                        if seed % 2 == 1 {
                            r.reverse();
                        }
                        r
                    })
                    .collect()
            };
            let shuffled = row(shape, &shuffle(&base), &shuffle(&head));
            prop_assert_eq!(&original, &shuffled, "{:?}", shape);
        }
    }

    #[test]
    fn repeating_one_runs_values_never_narrows_the_interval(
        base in side(1.0),
        head in side(1.05),
        which in any::<prop::sample::Index>(),
        times in 2usize..20,
    ) {
        for shape in SHAPES {
            let original = row(shape, &base, &head);
            let mut repeated = base.clone();
            let i = which.index(repeated.len());
            repeated[i] = repeated[i].iter().cycle().take(repeated[i].len() * times).copied().collect();
            let more = row(shape, &repeated, &head);
            // The same numbers summed in another order may differ in the last bits.
            let w = width(&original);
            let slack = if w.is_finite() { 1e-9 * w.abs().max(1.0) } else { 0.0 };
            prop_assert!(width(&more) >= width(&original) - slack, "{:?}: {:?} vs {:?}", shape, more, original);
            prop_assert_eq!(more.runs, original.runs, "{:?}", shape);
        }
    }
}
