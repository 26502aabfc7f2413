//! The comment as a reader sees it: verdicts in words, no bare midpoint when undecided, the
//! marker, the warning, the limit.

use super::fixtures::{self, example, result};
use super::*;
use benchgate_api::VerdictKind;
use benchgate_github::client::{CheckConclusion, CheckStatus};

/// The whole comment of each fixture, as a PR shows it (CONVENTIONS 21): a wording change is a
/// snapshot diff to review. The check run's summary is the same text.
#[test]
fn the_comment_reads_as_pinned() {
    for (name, input) in fixtures::cases() {
        let body = render_comment(&input);
        assert_eq!(render_check_summary(&input), body, "{name}");
        insta::assert_snapshot!(format!("comment_{name}"), body);
    }
}

/// The snapshots pin where the geomean and the hints go; without warnings there is no Hints
/// heading, and one time row is no summary.
#[test]
fn one_time_row_has_no_geomean_and_no_warning_no_hints() {
    let mut input = example();
    input.results.iter_mut().for_each(|r| r.warnings.clear());
    input.results.truncate(1);
    let body = render_comment(&input);
    assert!(
        !body.contains("**Hints**") && !body.contains("Geomean"),
        "{body}"
    );
}

#[test]
fn notes_are_capped_and_keep_the_comment_under_the_limit() {
    let mut input = example();
    let long = "n".repeat(512);
    input.results = (0..3000)
        .map(|i| BenchmarkResult {
            rule: None,
            warnings: vec![format!(
                "drift: head/base moves +0.{i}% per round (t = 3.1)"
            )],
            ..result(
                &format!("{long}-{i:05}"),
                VerdictKind::Equivalent,
                0.0,
                [-0.5, 0.5],
            )
        })
        .collect();
    let body = render_comment(&input);
    assert!(body.len() <= COMMENT_LIMIT, "{}", body.len());
    let notes: Vec<&str> = body.lines().filter(|l| l.contains(": drift: ")).collect();
    assert_eq!(notes.len(), NOTES_SHOWN, "{body}");
    assert!(body.contains("- … and 2990 more not shown here"), "{body}");
}

#[test]
fn an_undecided_interval_is_shown_without_its_midpoint() {
    let body = render_comment(&example());
    let row = body.lines().find(|l| l.contains("`render`")).unwrap();
    assert!(row.contains("| \\[-2.0%, +4.5%\\] |"), "{row}");
    assert!(!row.contains("+1.3%"), "{row}");
}

#[test]
fn a_pipe_in_a_benchmark_name_does_not_break_the_table() {
    let body = render_comment(&example());
    let row = body.lines().find(|l| l.contains("small")).unwrap();
    let unescaped = row.replace("\\|", "");
    assert_eq!(unescaped.matches('|').count(), 8, "{row}");
}

#[test]
fn a_huge_report_is_cut_below_the_limit_with_a_link() {
    let mut input = example();
    input.results = (0..3000)
        .map(|i| {
            result(
                &format!("bench-{i:05}"),
                VerdictKind::Equivalent,
                0.0,
                [-0.5, 0.5],
            )
        })
        .collect();
    let body = render_comment(&input);
    assert!(body.len() <= COMMENT_LIMIT, "{}", body.len());
    assert!(
        body.contains("more rows did not fit"),
        "cut rows are announced"
    );
}

/// 1,000 benchmarks whose names and words are full of multi-byte characters: the comment and
/// the check run's summary stay within GitHub's limits in bytes, cut at whole rows, with a
/// link to the rest, and the text stays valid UTF-8 (a `String`).
#[test]
fn a_thousand_benchmark_report_stays_within_the_byte_limits() {
    let mut input = example();
    input.results = (0..1000)
        .map(|i| {
            result(
                &format!("µ→±—·…-{}-{i:04}", "é".repeat(40)),
                VerdictKind::Slower,
                4.2,
                [1.0, 7.5],
            )
        })
        .collect();
    let comment = render_comment(&input);
    let summary = render_check_summary(&input);
    assert!(comment.len() <= COMMENT_LIMIT, "{} bytes", comment.len());
    assert!(summary.len() <= SUMMARY_LIMIT, "{} bytes", summary.len());
    // The character count alone would have let it through at several times the byte limit.
    assert!(comment.chars().count() < comment.len());
    for text in [&comment, &summary] {
        let cut = text
            .lines()
            .find(|l| l.contains("more rows did not fit"))
            .expect("cut rows are announced");
        assert!(cut.contains(&input.comparison_url), "{cut}");
    }
}

#[test]
fn text_is_cut_at_a_character_boundary() {
    let text = "→".repeat(10);
    let cut = fit_bytes(text.clone(), 8);
    assert!(cut.len() <= 8 && cut.ends_with('…'), "{cut}");
    assert_eq!(fit_bytes(text.clone(), 100), text);
}

#[test]
fn mentions_and_code_fences_in_names_stay_inert() {
    let mut input = example();
    input.results[0].name = "x```<img src=x> @octocat".into();
    input.benchmark_files_changed = vec!["benches/``a``.rs".into()];
    let body = render_comment(&input);
    let row = body
        .lines()
        .find(|l| l.starts_with("| ") && l.contains("img"))
        .unwrap();
    assert!(row.contains("````x```<img src=x> @octocat````"), "{row}");
    assert!(body.contains("```benches/``a``.rs```"), "{body}");
}

/// A C++ symbol such as `operator|` stays in its cell of the profile's table.
#[test]
fn a_pipe_in_a_profiled_function_name_does_not_split_its_cell() {
    let mut input = super::fixtures::profiled();
    let Some(super::ProfileView::Ready(summary)) = &mut input.profile else {
        unreachable!("the fixture is profiled")
    };
    summary.functions[0].function = "operator|(Flags, Flags)".to_owned();
    let body = render_comment(&input);
    let row = body.lines().find(|l| l.contains("operator")).unwrap();
    let unescaped = row.replace("\\|", "");
    assert_eq!(unescaped.matches('|').count(), 4, "{row}");
}

#[test]
fn the_check_fails_on_a_regression_and_is_neutral_when_undecided() {
    let mut input = example();
    input.state = ComparisonState::Done;
    let outcome = check_outcome(&input);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Failure));
    input.results.remove(0);
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Neutral)
    );
    input.results.pop();
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Success)
    );
    input.state = ComparisonState::Running;
    assert_eq!(check_outcome(&input).status, CheckStatus::InProgress);
}

/// `[gate] on_no_answer = "failure"`: a comparison whose jobs failed, or whose rounds ended
/// undecided, fails its pull request check (a required check then blocks the merge); by default
/// both are neutral. An answer is never changed by it.
#[test]
fn a_check_without_an_answer_fails_only_when_the_repository_fails_closed() {
    use benchgate_api::agent::NoAnswerConclusion;
    let mut failed = crate::report::fixtures::failed();
    let mut undecided = example();
    undecided.state = ComparisonState::Done;
    undecided.results.remove(0);
    let mut answered = undecided.clone();
    answered.results.pop();
    for input in [&failed, &undecided] {
        assert_eq!(
            pull_request_check_outcome(input).conclusion,
            Some(CheckConclusion::Neutral)
        );
    }
    for input in [&mut failed, &mut undecided, &mut answered] {
        input.config.gate.on_no_answer = NoAnswerConclusion::Failure;
    }
    let outcome = pull_request_check_outcome(&failed);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Failure));
    assert_eq!(
        outcome.title,
        "the benchmark jobs failed (on_no_answer = \"failure\")"
    );
    let outcome = pull_request_check_outcome(&undecided);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Failure));
    assert!(
        outcome.title.starts_with("no answer yet")
            && outcome.title.ends_with("(on_no_answer = \"failure\")"),
        "{}",
        outcome.title
    );
    assert_eq!(
        pull_request_check_outcome(&answered).conclusion,
        Some(CheckConclusion::Success)
    );
    // A merge group's check keeps the neutral it builds on: its own rules decide there.
    assert_eq!(
        check_outcome(&failed).conclusion,
        Some(CheckConclusion::Neutral)
    );
}

#[test]
fn the_check_title_says_when_an_answer_is_expected_in_minutes() {
    let mut input = example();
    // 14 more rounds at 12.4 s: within the 20 left, so the title gives the time.
    input.rounds_planned = 30;
    let title = check_outcome(&input).title;
    assert!(
        title.starts_with("running, 10 of 30 rounds, answer expected in ~2 min 54 s: "),
        "{title}"
    );
    // More than the rounds left: no time is promised while running.
    input.rounds_planned = 20;
    assert!(!check_outcome(&input).title.contains("expected"));
    input.seconds_per_round = None;
    input.state = ComparisonState::Done;
    input.results.remove(0);
    let title = check_outcome(&input).title;
    assert!(
        title.starts_with("no answer yet (needs ~14 more rounds): "),
        "{title}"
    );
}

#[test]
fn an_unbounded_interval_is_said_in_words_not_as_infinities() {
    let mut r = result("parse", VerdictKind::NoResultYet, 3.0, [-1.0, 1.0]);
    r.interval_pct = [None, None];
    assert_eq!(words::change(&r), "not bounded yet");
    r.interval_pct = [Some(-2.0), None];
    assert_eq!(words::change(&r), "[-2.0%, +∞]");
}

#[test]
fn only_gated_rows_selected_by_e_bh_decide_the_check() {
    let mut input = example();
    input.state = ComparisonState::Done;
    let mut memory = result("parse/large", VerdictKind::Slower, 8.0, [3.0, 12.0]);
    memory.metric = "peak_rss".to_owned();
    memory.gated = false;
    input.results = vec![
        result("parse/large", VerdictKind::Equivalent, 0.1, [-0.5, 0.6]),
        memory,
    ];
    // Peak memory grew, but time is what gates: the check passes and the row says so.
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Success)
    );
    assert!(render_comment(&input).contains("peak\\_rss (not gated)"));

    // A slower time that e-BH did not select among many benchmarks is no failure, and no
    // pass either: the check waits (neutral) for the rounds that select it or not.
    input.results[0] = result("parse/large", VerdictKind::Slower, 2.0, [0.1, 4.0]);
    input.results[0].selected = false;
    let waiting = check_outcome(&input);
    assert_eq!(waiting.conclusion, Some(CheckConclusion::Neutral));
    assert!(
        waiting.title.starts_with("no answer yet"),
        "{}",
        waiting.title
    );
    input.results[0].selected = true;
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Failure)
    );
}

#[test]
fn rows_shown_not_slower_than_the_tolerance_pass_the_check() {
    let input = fixtures::within_tolerance();
    let outcome = check_outcome(&input);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Success));
    assert_eq!(outcome.title, "1 no change, 2 within tolerance");
}

#[test]
fn a_grown_exact_count_fails_the_check_like_compare_does() {
    let mut input = example();
    input.state = ComparisonState::Done;
    let mut allocs = result("parse/large", VerdictKind::Exact, 4.0, [4.0, 4.0]);
    allocs.metric = "allocs_per_op".to_owned();
    allocs.practical = true;
    input.results = vec![allocs];
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Failure)
    );
    let unchanged = result("parse/large", VerdictKind::Exact, 0.0, [0.0, 0.0]);
    input.results[0] = BenchmarkResult {
        rule: None,
        metric: "allocs_per_op".to_owned(),
        ..unchanged
    };
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Success)
    );
    // A count that grew where higher is better is an improvement, never a failure.
    input.results[0] = BenchmarkResult {
        rule: None,
        direction: benchgate_api::Direction::HigherIsBetter,
        ..result("parse/large", VerdictKind::Exact, 4.0, [4.0, 4.0])
    };
    assert_eq!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Success)
    );
}

#[test]
fn a_throughput_drop_fails_the_check_and_is_called_slower() {
    let mut input = example();
    input.state = ComparisonState::Done;
    input.results = vec![BenchmarkResult {
        rule: None,
        metric: "throughput".to_owned(),
        unit: "ops/s".to_owned(),
        direction: benchgate_api::Direction::HigherIsBetter,
        practical: true,
        ..result(
            "bench.Json.parse",
            VerdictKind::Slower,
            -83.4,
            [-85.0, -80.0],
        )
    }];
    let outcome = check_outcome(&input);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Failure));
    assert_eq!(outcome.title, "1 slower");
    let body = render_comment(&input);
    assert!(body.contains("| **slower (beyond ±1.0%)** |"), "{body}");
    assert!(body.contains("-83% \\[-85%, -80%\\]"), "{body}");
}

/// A large suite reads in ten seconds: the summary first, the decided rows (regressions
/// first) in the table, the undecided and unchanged ones folded below it.
#[test]
fn a_large_suite_leads_with_the_summary_and_folds_the_undecided() {
    let mut input = example();
    let mut results: Vec<BenchmarkResult> = (0..60)
        .map(|i| {
            result(
                &format!("same-{i:02}"),
                VerdictKind::Equivalent,
                0.0,
                [-0.5, 0.5],
            )
        })
        .collect();
    results.push(result("slow-small", VerdictKind::Slower, 2.0, [1.0, 3.0]));
    results.push(result("slow-big", VerdictKind::Slower, 20.0, [15.0, 25.0]));
    results.push(result("quick", VerdictKind::Faster, -8.0, [-10.0, -6.0]));
    input.results = results;
    let body = render_comment(&input);
    let summary = body
        .lines()
        .find(|l| l.starts_with("63 benchmarks: 2 slower, 1 faster, 60 no change; "))
        .unwrap_or_else(|| panic!("{body}"));
    assert!(summary.contains("worst: slow-big"), "{summary}");
    let table: Vec<&str> = body.lines().filter(|l| l.starts_with("| `")).collect();
    assert!(
        table[0].contains("slow-big") && table[1].contains("slow-small"),
        "{body}"
    );
    assert!(table[2].contains("quick"), "{body}");
    let folded = body
        .find("<details><summary>60 undecided or unchanged rows</summary>")
        .unwrap();
    assert!(
        body[folded..].contains("same-00"),
        "the unchanged rows are folded"
    );
    assert!(body.find("slow-big").unwrap() < folded);
}

#[test]
fn rules_say_which_rows_they_decided_and_ignored_rows_are_listed_once() {
    let mut input = example();
    input.config.suite = Some("parser".to_owned());
    input.config.rules = vec![
        benchgate_api::BenchmarkRule {
            gate: false,
            ..benchgate_api::BenchmarkRule::matching("parse*")
        },
        benchgate_api::BenchmarkRule {
            ignore: true,
            ..benchgate_api::BenchmarkRule::matching("flaky_*")
        },
    ];
    input
        .results
        .push(result("flaky_io", VerdictKind::Slower, 30.0, [20.0, 40.0]));
    let rules = benchgate_api::RuleSet::of(&input.config);
    benchgate_stats::mark_gate(&mut input.results, 0.05, &rules);
    let body = render_comment(&input);
    assert!(body.starts_with("<!-- benchgate:parser (linux-x86-quiet) -->\n### benchgate · parser · linux-x86-quiet — "), "{body}");
    assert!(
        body.contains(
            "**Rules** from `.benchgate.toml` on the base branch (first match wins):\n\
         - rule 1 `parse*` (not gated): `parse/large`, `parse|small`\n\
         - rule 2 `flaky_*` (ignored): `flaky_io`\n"
        ),
        "{body}"
    );
    assert!(!body.contains("| `flaky_io` |"), "{body}");
    // Nor does the headline count it: it reads as if the row were not there.
    let without: Vec<_> = input
        .results
        .iter()
        .filter(|r| r.name != "flaky_io")
        .cloned()
        .collect();
    assert!(
        body.contains(&format!("— {}\n", words::headline(&without))),
        "{body}"
    );
    // The only slower row is not gated, the ignored one never counts: nothing fails.
    assert_ne!(
        check_outcome(&input).conclusion,
        Some(CheckConclusion::Failure)
    );
}

#[test]
fn a_rule_on_a_metric_the_benchmark_lacks_says_it_gates_nothing() {
    let mut input = example();
    input.config.rules = vec![benchgate_api::BenchmarkRule {
        metric: Some("instructions".to_owned()),
        ..benchgate_api::BenchmarkRule::matching("parse*")
    }];
    let rules = benchgate_api::RuleSet::of(&input.config);
    benchgate_stats::mark_gate(&mut input.results, 0.05, &rules);
    assert!(
        input
            .results
            .iter()
            .filter(|r| r.name.starts_with("parse"))
            .all(|r| !r.gated),
        "no parse row reports instructions, so none gates"
    );
    let body = render_comment(&input);
    assert!(
        body.contains(
            "- rule 1 `parse*` (gated on metric instructions): `parse/large`, `parse|small` \
             — ⚠ `instructions` not reported by `parse/large`, `parse|small`, so they gate on nothing\n"
        ),
        "{body}"
    );
}

#[test]
fn a_suite_with_bench_from_head_says_both_sides_ran_heads_benchmark_code() {
    let body = render_comment(&example());
    assert!(!body.contains("**Benchmark code:**"), "{body}");
    let mut input = example();
    input.config.benchmark.bench_from_head = vec!["benches/**".into()];
    let body = render_comment(&input);
    assert!(
        body.contains("- **Benchmark code:** head's version of `benches/**` on both sides"),
        "{body}"
    );
}

/// Both sides built to byte-identical artifacts: the check passes exactly, and the comment
/// says why no round ran.
#[test]
fn an_identical_build_passes_without_a_round() {
    let mut input = example();
    input.state = ComparisonState::Done;
    input.results = Vec::new();
    input.rounds_done = 0;
    input.identical_build = Some(benchgate_api::agent::IdenticalBuild {
        files: vec!["target/release/deps/bench-5f1c".into(), "bench.sh".into()],
        bytes: 7 * 1024 * 1024,
        sha256: "3f2a9c0e41d7".repeat(5) + "abcd",
    });
    let outcome = check_outcome(&input);
    assert_eq!(outcome.conclusion, Some(CheckConclusion::Success));
    assert_eq!(
        outcome.title,
        "identical build: 2 artifacts byte-identical, nothing to measure"
    );
    let comment = render_comment(&input);
    let top: Vec<&str> = comment.lines().skip(1).take(5).collect();
    insta::assert_snapshot!("identical_build_comment_top", top.join("\n"));
}

/// On GitLab a change is a merge request: the note and the status never call it a PR (a
/// GitLab maintainer reads "!N", not "#N"), and GitHub's wording is untouched.
#[test]
fn a_gitlab_report_calls_the_change_an_mr() {
    let says_pr = |text: &str| {
        text.split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "PR" || w == "PRs")
    };
    let mut cancelled = example();
    cancelled.state = ComparisonState::Cancelled;
    cancelled.forge = benchgate_store::model::Forge::GitLab;
    let waiting = {
        let mut w = fixtures::awaiting_approval();
        w.forge = benchgate_store::model::Forge::GitLab;
        w
    };
    for input in [&cancelled, &waiting] {
        let note = render_comment(input);
        let title = pull_request_check_outcome(input).title;
        assert!(!says_pr(&note), "{note}");
        assert!(!says_pr(&title), "{title}");
    }
    assert!(render_comment(&cancelled).contains("the MR was closed or made a draft"));
    assert_eq!(
        pull_request_check_outcome(&waiting).title,
        "waiting for a maintainer's /rebench (fork MR)"
    );
    let mut github = waiting.clone();
    github.forge = benchgate_store::model::Forge::GitHub;
    assert_eq!(
        pull_request_check_outcome(&github).title,
        "waiting for a maintainer's /rebench (fork PR)"
    );
}
