//! Comparisons the report's tests and the tasks' snapshot tests render: fixed times and shas,
//! so what GitHub would receive is the same on every run.

use super::*;
use benchgate_api::VerdictKind;
use benchgate_api::agent::{BenchmarkSpec, GateSpec, PullRequestBranch, ScheduleKind};
use chrono::TimeZone;

/// The fixtures' clock: 2026-05-01 12:00 UTC.
pub(crate) fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap()
}

/// A gated `wall_time` row of 1 ms at base, `change` percent at head, over 10 pairs.
pub(crate) fn result(
    name: &str,
    verdict: VerdictKind,
    change: f64,
    interval: [f64; 2],
) -> BenchmarkResult {
    BenchmarkResult {
        rule: None,
        name: name.to_owned(),
        metric: "wall_time".to_owned(),
        unit: "ns".to_owned(),
        n: 10,
        base_center: Some(1_000_000.0),
        head_center: Some(1_000_000.0 * (1.0 + change / 100.0)),
        change_pct: Some(change),
        interval_pct: [Some(interval[0]), Some(interval[1])],
        fixed_interval_pct: [Some(interval[0]), Some(interval[1])],
        verdict,
        practical: verdict == VerdictKind::Slower,
        rounds_needed: (verdict == VerdictKind::NoResultYet).then_some(14),
        e_value: 1.0,
        gated: true,
        selected: true,
        hodges_lehmann: None,
        warnings: Vec::new(),
        direction: Default::default(),
        margin_pct: 1.0,
        layout_pct: None,
        tolerance_pct: None,
        reason: None,
        runners: Vec::new(),
        runs: None,
        modes: None,
        guard_runs: None,
    }
}

/// A comparison on the quiet runner, halfway through, with a decided slower row (a gated
/// practical regression with two hints), one with no change beyond ±M and one with no result
/// yet.
pub(crate) fn example() -> CommentInput {
    let now = now();
    CommentInput {
        comparison_id: 42,
        forge: benchgate_store::model::Forge::GitHub,
        comparison_url: "https://bench.example/comparisons/42".to_owned(),
        runner_label: "linux-x86-quiet".to_owned(),
        state: ComparisonState::Running,
        base_sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e".to_owned(),
        head_sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".to_owned(),
        rounds_done: 10,
        seconds_per_round: Some(12.4),
        rounds_planned: 20,
        config: ComparisonConfig {
            benchmark: BenchmarkSpec {
                build: Some("cargo build --release".to_owned()),
                run: "./target/release/bench-suite".to_owned(),
                format: "criterion".to_owned(),
                rounds: 10,
                warmup: 1,
                schedule: ScheduleKind::Abba,
                seed: None,
                timeout_secs: None,
                env: Vec::new(),
                bench_from_head: Vec::new(),
                network: false,
                layout_salt: None,
                canary_work: false,
                counts: None,
                count_run: None,
                ignore: Vec::new(),
                artifacts: Vec::new(),
                measure_secs: None,
                measure_auto: false,
                budget_secs: None,
            },
            gate: GateSpec::default(),
            suite: None,
            rules: Vec::new(),
        },
        runner: Some(RunnerInfo {
            name: "quiet-1".to_owned(),
            fingerprint: Some(
                "AMD EPYC 7B13, 8 cores (4 physical), Linux 6.1.0, governor performance".to_owned(),
            ),
            note: None,
            audit_flag: None,
        counter: None,
        }),
        results: vec![
            BenchmarkResult {
                rule: None,
                warnings: vec![
                    "drift: head/base moves +0.40% per round (t = 3.1)".to_owned(),
                    "mean and median disagree (skew or outliers): Hodges–Lehmann +5.9% vs mean +6.5%"
                        .to_owned(),
                ],
                ..result("parse/large", VerdictKind::Slower, 6.5, [4.1, 9.0])
            },
            result("parse|small", VerdictKind::Equivalent, 0.1, [-0.6, 0.7]),
            result("render", VerdictKind::NoResultYet, 1.3, [-2.0, 4.5]),
        ],
        outliers: Some((1, 10)),
        floors: vec![FloorInfo {
            benchmark: "parse/large".to_owned(),
            metric: "wall_time".to_owned(),
            spread_pct: 0.42,
            bias_pct: 0.1,
            sessions: 3,
            computed_at: now - chrono::TimeDelta::days(2),
        }],
        benchmark_files_changed: vec!["benches/parse.rs".to_owned()],
        // Branched from main at base_sha; main has moved three commits on since.
        branch: Some(PullRequestBranch {
            base_ref: "main".to_owned(),
            base_tip: "a3f9e2c41b7d5e8f9012c3d4e5f6a7b8c9d0e1f2".to_owned(),
            base_ahead_by: 3,
            no_merge_base: false,
            trees: None,
        }),
        awaiting_approval: false,
        failure: None,
        queue: None,
        identical_build: None,
        acceptance: None,
        profile: None,
        claims: Vec::new(),
        claims_not_read: Vec::new(),
        now,
    }
}

/// Finished, and failing: a decided slower row beyond ±M that fails the check, a faster one,
/// a slower one within ±M, an unchanged exact count and a grown peak memory that is not gated.
pub(crate) fn done_with_a_regression() -> CommentInput {
    let mut input = example();
    if let Some(branch) = &mut input.branch {
        // Up to date with main: the merge base is main's tip.
        branch.base_ahead_by = 0;
        branch.base_tip = input.base_sha.clone();
    }
    input.state = ComparisonState::Done;
    input.rounds_done = 20;
    input.benchmark_files_changed.clear();
    input.outliers = Some((0, 20));
    let mut quick = result("render", VerdictKind::Faster, -12.4, [-15.0, -9.8]);
    quick.practical = true;
    let mut within = result("tokenize", VerdictKind::Slower, 0.6, [0.2, 0.9]);
    within.practical = false;
    let mut allocs = result("parse/large", VerdictKind::Exact, 0.0, [0.0, 0.0]);
    (allocs.metric, allocs.unit) = ("allocations".to_owned(), "count".to_owned());
    (allocs.base_center, allocs.head_center) = (Some(1843.0), Some(1843.0));
    allocs.practical = false;
    let mut memory = result("parse/large", VerdictKind::Slower, 8.0, [3.0, 12.0]);
    (memory.metric, memory.unit) = ("peak_rss".to_owned(), "bytes".to_owned());
    (memory.base_center, memory.head_center) = (Some(48_234_496.0), Some(52_093_255.7));
    memory.gated = false;
    input.results = vec![
        result("parse/large", VerdictKind::Slower, 6.5, [4.1, 9.0]),
        allocs,
        memory,
        quick,
        within,
    ];
    input.results.iter_mut().for_each(|r| r.n = 20);
    input
}

/// Finished with every row inside ±M: the check passes.
pub(crate) fn all_no_change() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Done;
    input.rounds_done = 20;
    input.benchmark_files_changed.clear();
    input.outliers = Some((0, 20));
    input.results = vec![
        result("parse/large", VerdictKind::Equivalent, 0.3, [-0.4, 0.9]),
        result("parse|small", VerdictKind::Equivalent, -0.1, [-0.6, 0.5]),
        result("render", VerdictKind::Equivalent, 0.0, [-0.8, 0.8]),
    ];
    input.floors.push(FloorInfo {
        benchmark: "render".to_owned(),
        metric: "wall_time".to_owned(),
        spread_pct: 1.37,
        bias_pct: 0.25,
        sessions: 1,
        computed_at: input.now - chrono::TimeDelta::minutes(5),
    });
    input
}

/// Two runners of one hardware class combined: a row below their resolution and one with no
/// result yet when the planned rounds ran out, no A/A floor yet; the check is neutral.
pub(crate) fn combined_below_resolution() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Done;
    input.rounds_done = 40;
    input.rounds_planned = 40;
    input.benchmark_files_changed.clear();
    input.floors.clear();
    input.outliers = None;
    input.runner = Some(RunnerInfo {
        name: "alpha + beta".to_owned(),
        fingerprint: Some("Intel Xeon E-2388G, 16 cores (8 physical), Linux 6.8.0".to_owned()),
        note: Some("2 runners of one hardware class, combined stratified by runner".to_owned()),
        audit_flag: None,
        counter: None,
    });
    let combined = |mut r: BenchmarkResult| {
        r.runners = vec!["alpha".to_owned(), "beta".to_owned()];
        r.n = 40;
        r
    };
    let mut below = result("io/flush", VerdictKind::BelowResolution, 0.2, [-3.1, 3.6]);
    below.margin_pct = 2.5;
    let mut open = result("io/fsync", VerdictKind::NoResultYet, -1.9, [-4.0, 0.3]);
    open.rounds_needed = Some(60);
    input.results = vec![
        combined(below),
        combined(open),
        combined(result("io/read", VerdictKind::Equivalent, 0.1, [-0.9, 1.2])),
    ];
    input
}

/// A maintainer accepted the failing rows: the check succeeds and the comment says who and why
/// (a reason longer than a commit status's description).
pub(crate) fn accepted() -> CommentInput {
    let mut input = done_with_a_regression();
    input.acceptance = Some(AcceptanceInfo {
        by: "octocat".to_owned(),
        reason: "the new parser validates UTF-8 up front; the slowdown buys correctness on \
                 malformed input and was discussed in the design review"
            .to_owned(),
        at: input.now - chrono::TimeDelta::hours(1),
        rows: failing_rows(&input),
    });
    input
}

/// Done, every gated row shown not slower than the 5% tolerance (one also inside ±M): the
/// check passes without waiting for equivalence.
pub(crate) fn within_tolerance() -> CommentInput {
    let mut input = all_no_change();
    input.results = vec![
        BenchmarkResult {
            tolerance_pct: Some(5.0),
            ..result("parse/large", VerdictKind::NotSlower, 0.4, [-2.1, 3.2])
        },
        BenchmarkResult {
            tolerance_pct: Some(5.0),
            ..result("render", VerdictKind::NotSlower, -1.2, [-4.4, 2.1])
        },
        BenchmarkResult {
            tolerance_pct: Some(5.0),
            ..result("parse|small", VerdictKind::Equivalent, 0.1, [-0.6, 0.7])
        },
    ];
    input
}

/// A PR whose branch shares no commit with main: measured against main's tip, and said so.
pub(crate) fn no_merge_base() -> CommentInput {
    let mut input = all_no_change();
    if let Some(branch) = &mut input.branch {
        branch.no_merge_base = true;
        branch.base_ahead_by = 0;
        branch.base_tip = input.base_sha.clone();
    }
    input
}

/// A fork PR nobody approved yet: nothing ran.
pub(crate) fn awaiting_approval() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Queued;
    input.awaiting_approval = true;
    input.rounds_done = 0;
    input.rounds_planned = 0;
    input.results.clear();
    input.outliers = None;
    input.benchmark_files_changed.clear();
    input
}

/// Waiting third in line behind work whose pace is known.
pub(crate) fn queued_third_in_line() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Queued;
    input.rounds_done = 0;
    input.seconds_per_round = None;
    input.runner = None;
    input.results.clear();
    input.outliers = None;
    input.floors.clear();
    input.queue = Some(crate::queue_wait::QueueWait {
        place: 3,
        label: input.runner_label.clone(),
        time: crate::queue_wait::WaitTime::Known {
            start_secs: 347.0,
            answer_secs: Some(655.0),
        },
    });
    input
}

/// Every job failed.
pub(crate) fn failed() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Failed;
    input.rounds_done = 0;
    input.results.clear();
    input.outliers = None;
    input.benchmark_files_changed.clear();
    input.failure = Some("bench-suite exited with status 101 on base".to_owned());
    input
}

/// The regression profiled: `slow_path` took a third of head's samples; a frame of a stripped
/// library has no symbol.
pub(crate) fn profiled() -> CommentInput {
    let mut input = done_with_a_regression();
    let change =
        |function: &str, base: f64, head: f64, total_pp: f64| benchgate_profile::FunctionChange {
            function: function.to_owned(),
            self_pp: head - base,
            total_pp,
            base_self_share: base,
            head_self_share: head,
        };
    input.profile = Some(super::ProfileView::Ready(super::ProfileSummary {
        runner: "quiet-1".to_owned(),
        event: "cpu-clock".to_owned(),
        runs: 3,
        base_samples: 812,
        head_samples: 1215,
        functions: vec![
            change("parse_header", 4.0, 33.1, 33.2),
            change("tokenize", 61.5, 41.2, -20.3),
            change("[libfoo.so+0x1f2a]", 20.0, 14.1, -5.9),
            change("memcpy", 2.0, 2.04, 0.0),
        ],
        lacks_symbols: true,
        svg_url: "https://bench.example/comparisons/42/profile.svg".to_owned(),
    }));
    input
}

/// The regression, on a runner without perf.
pub(crate) fn profile_unavailable() -> CommentInput {
    let mut input = done_with_a_regression();
    input.profile = Some(super::ProfileView::Unavailable {
        runner: "quiet-1".to_owned(),
        reason: "perf is not on PATH (Debian: apt-get install linux-perf)".to_owned(),
    });
    input
}

/// A suite with a layout floor on a runner whose canaries are flagged: one row moved only as
/// much as rebuilding moves it, one beyond that.
pub(crate) fn layout_on_a_flagged_runner() -> CommentInput {
    let mut input = example();
    input.state = ComparisonState::Done;
    input.rounds_done = 20;
    input.benchmark_files_changed.clear();
    let layout = |mut r: BenchmarkResult| {
        r.margin_pct = 4.1;
        r.layout_pct = Some(4.1);
        r
    };
    let mut slower = layout(result(
        "parse/large",
        VerdictKind::Slower,
        11.8,
        [7.0, 16.8],
    ));
    slower.practical = true;
    input.results = vec![
        slower,
        layout(result("render", VerdictKind::Equivalent, 2.2, [0.6, 3.8])),
    ];
    if let Some(runner) = input.runner.as_mut() {
        runner.audit_flag = Some(
            "A/A canaries on this runner claimed a change in 9 of 60 (15.0%, 95% interval 7.1–26.6%), more often than α = 5%: treat its verdicts with care until it is recalibrated"
                .to_owned(),
        );
    }
    input
}

/// Each fixture by the name its snapshots carry.
/// Every gated row passes, but under `[gate] claims = "require"` the description's benchstat
/// claim of −20% on `parse/large` is not reproduced (the interval holds 0 and not −20%), and
/// `render`'s 3% is not shown yet: the check fails on the claim.
pub(crate) fn claims_required() -> CommentInput {
    let mut input = within_tolerance();
    input.config.gate.claims = benchgate_api::agent::ClaimsMode::Require;
    let body = "Faster parsing.\n\n```\ncpu: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz\n\
                name         old time/op  new time/op  delta\n\
                parse/large  1.20ms ± 1%  0.96ms ± 2%  -20.00%  (p=0.000 n=5+5)\n```\n\n\
                And `render` is 3% faster. Our `parse` is 40% faster than `serde_json` \
                on this input.\n";
    let reading = benchgate_claims::read_all(body);
    input.claims = benchgate_claims::answer_all(&reading.claims, &input.results);
    input.claims_not_read = reading.not_read;
    input
}

pub(crate) fn cases() -> Vec<(&'static str, CommentInput)> {
    vec![
        ("running", example()),
        ("done_with_a_regression", done_with_a_regression()),
        ("all_no_change", all_no_change()),
        ("no_merge_base", no_merge_base()),
        ("within_tolerance", within_tolerance()),
        ("combined_below_resolution", combined_below_resolution()),
        ("accepted", accepted()),
        ("awaiting_approval", awaiting_approval()),
        ("queued_third_in_line", queued_third_in_line()),
        ("failed", failed()),
        ("profiled", profiled()),
        ("profile_unavailable", profile_unavailable()),
        ("layout_on_a_flagged_runner", layout_on_a_flagged_runner()),
        ("claims_required", claims_required()),
    ]
}
