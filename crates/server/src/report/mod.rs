//! The PR comment and the check run's summary: one Markdown report per comparison and runner
//! label, rendered from `templates/comment.md`. [`render_comment`] is pure (the demo prints
//! exactly what would be posted); [`load`] gathers its input from the store.

mod check;
mod claims;
mod format;
mod load;
mod profile;
mod queue;
mod rules;
mod status;

use askama::Template;
use benchgate_api::agent::{ComparisonConfig, PullRequestBranch};
use benchgate_api::{BenchmarkResult, VerdictKind};
use benchgate_github::client::comment_marker;
use benchgate_github::repo_config::comment_key;
use benchgate_stats::{GateOutcome, words};
use benchgate_store::model::{ComparisonState, Forge};
use chrono::{DateTime, Utc};

pub use check::{CheckOutcome, check_outcome, pull_request_check_outcome};
pub use claims::{claim_lines, not_read_lines};
pub(crate) use load::pr_claims_answered;
pub use load::{LoadedReport, load};
pub use profile::{ProfileSummary, ProfileView, source as profile_source, view as profile_view};

/// GitHub refuses comment bodies longer than 65,536 characters; counted in bytes here (never
/// fewer than characters), so text full of `—·→±µ` stays under it too.
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub refuses a check run's `output.summary` over 65,535 bytes.
pub const SUMMARY_LIMIT: usize = 65_535;

/// At most this many diagnostic notes in a comment; the JSON has every one.
pub const NOTES_SHOWN: usize = 10;

/// The runner that produced the headline numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerInfo {
    pub name: String,
    /// One line: CPU, cores, kernel, governor.
    pub fingerprint: Option<String>,
    /// Other runners: combined with this one, or reported separately, and why.
    pub note: Option<String>,
    /// Set while the runner's A/A canaries claim changes credibly more often than α.
    pub audit_flag: Option<String>,
    /// The instruction counter the runner reported (`valgrind cachegrind`), when it did.
    pub counter: Option<String>,
}

/// One A/A noise floor used for a benchmark and metric.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorInfo {
    pub benchmark: String,
    pub metric: String,
    /// Within-session spread `s_aa`, in percent.
    pub spread_pct: f64,
    /// Between-session bias `tau_b`, in percent.
    pub bias_pct: f64,
    pub sessions: i64,
    pub computed_at: DateTime<Utc>,
}

/// Everything the comment states about one comparison on one runner label.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentInput {
    pub comparison_id: i64,
    /// Where the change lives: what it is called ("PR", "MR").
    pub forge: Forge,
    /// `{public_url}/comparisons/{id}`.
    pub comparison_url: String,
    pub runner_label: String,
    pub state: ComparisonState,
    pub base_sha: String,
    pub head_sha: String,
    /// Measured rounds landed so far (the headline runner's pairs).
    pub rounds_done: u64,
    /// Rounds of every job not cancelled.
    pub rounds_planned: u64,
    /// Median wall time of one round on the headline runner (both sides), from when its
    /// rounds landed; `None` before two rounds of one job landed.
    pub seconds_per_round: Option<f64>,
    pub config: ComparisonConfig,
    pub runner: Option<RunnerInfo>,
    /// Every row, analysed or not; each carries its own margin M.
    pub results: Vec<BenchmarkResult>,
    /// Pairs flagged as outliers, and pairs in all.
    pub outliers: Option<(usize, usize)>,
    pub floors: Vec<FloorInfo>,
    /// Changed files under `[benchmark] paths`.
    pub benchmark_files_changed: Vec<String>,
    /// A PR's branch point: the base measured is its merge base, and the base branch may have
    /// moved on since.
    pub branch: Option<PullRequestBranch>,
    /// A fork PR waiting for a maintainer's `/rebench`.
    pub awaiting_approval: bool,
    /// Why the jobs failed, when they did.
    pub failure: Option<String>,
    /// A maintainer's `/benchgate accept` of this head, in force.
    pub acceptance: Option<AcceptanceInfo>,
    /// Profiled runs after a verdict: where the time went.
    pub profile: Option<ProfileView>,
    /// The PR description's performance claims, answered from `results`.
    pub claims: Vec<benchgate_api::ClaimAnswer>,
    /// Lines of the description that look like claims but compare two other things: listed
    /// so the author can restate one with `/benchgate claim`.
    pub claims_not_read: Vec<benchgate_claims::NotRead>,
    /// While queued: its place in its label's queue and how long it waits.
    pub queue: Option<crate::queue_wait::QueueWait>,
    /// Both sides built to byte-identical `artifacts`: no round ran, and none is needed.
    pub identical_build: Option<benchgate_api::agent::IdenticalBuild>,
    pub now: DateTime<Utc>,
}

/// Who accepted which failing rows of the head, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptanceInfo {
    pub by: String,
    pub reason: String,
    pub at: DateTime<Utc>,
    /// `benchmark metric` keys (see `benchgate_store::model::acceptance_row`).
    pub rows: Vec<String>,
}

/// The rows that fail the gate, as acceptance keys: what `/benchgate accept` records.
pub fn failing_rows(input: &CommentInput) -> Vec<String> {
    input
        .results
        .iter()
        .filter(|r| benchgate_stats::is_regression(r, input.config.gate.fail_on))
        .map(|r| benchgate_store::model::acceptance_row(&r.name, &r.metric))
        .collect()
}

/// The failing rows no acceptance covers.
fn unaccepted_rows(input: &CommentInput) -> Vec<String> {
    let accepted = input
        .acceptance
        .as_ref()
        .map(|a| a.rows.as_slice())
        .unwrap_or(&[]);
    failing_rows(input)
        .into_iter()
        .filter(|row| !accepted.contains(row))
        .collect()
}

struct Row {
    name: String,
    metric: String,
    base: String,
    head: String,
    change: String,
    rounds: usize,
    verdict: String,
}

#[derive(Template)]
#[template(path = "comment.md")]
struct CommentTemplate<'a> {
    marker: String,
    /// What the change is called: "PR" / "pull request", "MR" / "merge request".
    change: &'static str,
    change_long: &'static str,
    id: i64,
    label: String,
    headline: String,
    /// "identical build: …": why nothing was measured.
    identical: Option<String>,
    status_line: String,
    /// When an answer is expected, while a gated row waits.
    forecast: Option<String>,
    awaiting_approval: bool,
    head: String,
    failure: Option<String>,
    accepted: Option<String>,
    /// The PR's claims, one line each, answered, then the lines not read as claims.
    claims: Vec<String>,
    summary: String,
    rows: &'a [Row],
    folded: &'a [Row],
    /// "3 undecided or unchanged rows", the folded section's summary.
    folded_rows: String,
    rows_cut: usize,
    geomean: Option<String>,
    notes: &'a [String],
    profile: Vec<String>,
    rules: Vec<String>,
    benchmark_files_changed: String,
    branch_note: Option<String>,
    audit_flag: Option<String>,
    /// Some row's margin holds the runner's layout floor.
    layout_rows: bool,
    bench_from_head: String,
    runner: String,
    workload: String,
    warmup: u32,
    outliers: String,
    floors: Vec<String>,
    rebench_rounds: u32,
    url: String,
}

/// The comment's Markdown, hidden marker included, within [`COMMENT_LIMIT`] bytes (rows past
/// the limit are cut and the dashboard link carries the rest).
pub fn render_comment(input: &CommentInput) -> String {
    render_within(input, COMMENT_LIMIT)
}

/// What a change is called where it lives: a pull request ("PR") on GitHub, a merge request
/// ("MR") on GitLab.
pub fn change_word(forge: Forge) -> &'static str {
    match forge {
        Forge::GitHub => "PR",
        Forge::GitLab => "MR",
    }
}

/// The check run's summary: the same report within [`SUMMARY_LIMIT`] bytes.
pub fn render_check_summary(input: &CommentInput) -> String {
    render_within(input, SUMMARY_LIMIT)
}

/// The report cut to `max_bytes`: whole rows first, then (only if the rest alone is too long)
/// the text at a UTF-8 boundary.
fn render_within(input: &CommentInput, max_bytes: usize) -> String {
    let rule_lines = rules::rule_lines(&input.results, &input.config.rules);
    // Rows a rule ignores are listed once among the rules, never in the table.
    let input = &CommentInput {
        results: rules::shown(&input.results),
        ..input.clone()
    };
    // Report order: decided rows (regressions first) in the table, the rest folded below it.
    let ordered: Vec<&BenchmarkResult> = benchgate_stats::report_order(&input.results)
        .into_iter()
        .map(|i| &input.results[i])
        .collect();
    let decided = ordered
        .iter()
        .filter(|r| benchgate_stats::standing(r).is_decided())
        .count();
    let rows: Vec<Row> = ordered
        .iter()
        .map(|r| Row {
            name: format::code_cell(&r.name),
            metric: format::cell(&words::metric_label(r)),
            base: format::cell(&words::center(r.base_center, &r.unit)),
            head: format::cell(&words::center(r.head_center, &r.unit)),
            change: format::cell(&words::change(r)),
            rounds: r.n,
            verdict: if words::is_decided_change(r) {
                format!("**{}**", format::cell(&words::verdict(r)))
            } else {
                format::cell(&words::verdict(r))
            },
        })
        .collect();
    let notes = note_lines(&input.results);
    let mut shown = rows.len();
    loop {
        let cut = Shown {
            decided: &rows[..shown.min(decided)],
            folded: &rows[decided.min(shown)..shown],
            cut: rows.len() - shown,
        };
        let body = render_rows(input, cut, &notes, &rule_lines);
        if body.len() <= max_bytes {
            return body;
        }
        if shown == 0 {
            // Notes are capped, but ten of them with 512-byte names could still tip it over.
            let none = Shown {
                decided: &[],
                folded: &[],
                cut: rows.len(),
            };
            return fit_bytes(render_rows(input, none, &[], &[]), max_bytes);
        }
        // Cut a quarter of what is left each time: few renders even for thousands of rows.
        shown -= (shown / 4).max(1);
    }
}

/// `text` cut to at most `max_bytes` at a character boundary, ending in `…` when cut.
pub fn fit_bytes(mut text: String, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text;
    }
    let ellipsis = '…';
    let mut end = max_bytes.saturating_sub(ellipsis.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push(ellipsis);
    text
}

/// The line under the table: the geomean of the gated time rows, a summary and never a gate.
fn geomean_line(results: &[BenchmarkResult]) -> Option<String> {
    let g = benchgate_stats::geomean_row(results)?;
    Some(format!(
        "Geomean of {} benchmarks' time: {} — a summary, not a verdict; it never fails the check.",
        g.benchmarks,
        words::percent(g.change_pct)
    ))
}

/// The diagnostics after the table, gated rows first, at most [`NOTES_SHOWN`] and then how
/// many more there are.
fn note_lines(results: &[BenchmarkResult]) -> Vec<String> {
    let mut all: Vec<(bool, String)> = results
        .iter()
        .flat_map(|r| {
            r.warnings.iter().map(move |w| {
                let line = format!(
                    "{} {}: {}",
                    format::code(&r.name),
                    format::cell(&r.metric),
                    format::cell(w)
                );
                (!r.gated, line)
            })
        })
        .collect();
    all.sort_by_key(|(not_gated, _)| *not_gated);
    let more = all.len().saturating_sub(NOTES_SHOWN);
    let mut lines: Vec<String> = all.into_iter().take(NOTES_SHOWN).map(|(_, l)| l).collect();
    if more > 0 {
        lines.push(format!("… and {more} more not shown here"));
    }
    lines
}

/// The rows one rendering shows: decided ones in the table, the rest folded, and how many
/// did not fit.
#[derive(Clone, Copy)]
struct Shown<'a> {
    decided: &'a [Row],
    folded: &'a [Row],
    cut: usize,
}

fn render_rows(
    input: &CommentInput,
    shown: Shown<'_>,
    notes: &[String],
    rule_lines: &[String],
) -> String {
    let bench = &input.config.benchmark;
    let suite = input.config.suite.as_deref();
    let template = CommentTemplate {
        marker: comment_marker(&comment_key(suite, &input.runner_label)),
        change: change_word(input.forge),
        change_long: match input.forge {
            Forge::GitHub => "pull request",
            Forge::GitLab => "merge request",
        },
        id: input.comparison_id,
        label: match suite {
            Some(suite) => format!(
                "{} · {}",
                format::cell(suite),
                format::cell(&input.runner_label)
            ),
            None => format::cell(&input.runner_label),
        },
        headline: match &input.identical_build {
            Some(_) => "identical build".to_owned(),
            None => headline(&input.results),
        },
        identical: input
            .identical_build
            .as_ref()
            .map(|b| format::cell(&b.describe())),
        status_line: status::status_line(input),
        forecast: forecast(input),
        awaiting_approval: input.awaiting_approval && input.rounds_planned == 0,
        head: words::short_sha(&input.head_sha).to_owned(),
        accepted: acceptance_line(input),
        claims: claim_lines(&input.claims, change_word(input.forge))
            .into_iter()
            .chain(not_read_lines(
                &input.claims_not_read,
                change_word(input.forge),
            ))
            .collect(),
        failure: input.failure.as_deref().map(format::cell),
        summary: benchgate_stats::order::summary(&input.results)
            .map(|line| format::cell(&line))
            .unwrap_or_default(),
        rows: shown.decided,
        folded: shown.folded,
        folded_rows: words::count(shown.folded.len(), "undecided or unchanged row"),
        rows_cut: shown.cut,
        geomean: geomean_line(&input.results),
        notes,
        profile: profile::lines(input.profile.as_ref()),
        rules: rule_lines.to_vec(),
        layout_rows: input.results.iter().any(|r| r.layout_pct.is_some()),
        branch_note: input
            .branch
            .as_ref()
            .and_then(|b| branch_note(b, &input.base_sha, change_word(input.forge))),
        audit_flag: input
            .runner
            .as_ref()
            .and_then(|r| r.audit_flag.as_deref())
            .map(format::cell),
        benchmark_files_changed: input
            .benchmark_files_changed
            .iter()
            .take(20)
            .map(|f| format::code(f))
            .collect::<Vec<_>>()
            .join(", "),
        bench_from_head: bench
            .bench_from_head
            .iter()
            .take(10)
            .map(|g| format::code(g))
            .collect::<Vec<_>>()
            .join(", "),
        runner: match &input.runner {
            Some(r) => {
                let machine = match &r.fingerprint {
                    Some(f) => format!("{} — {}", format::code(&r.name), format::cell(f)),
                    None => format!("{} (no fingerprint reported)", format::code(&r.name)),
                };
                match &r.note {
                    Some(note) => format!("{machine}; {}", format::cell(note)),
                    None => machine,
                }
            }
            None => "not claimed yet".to_owned(),
        },
        workload: format!(
            "{} (format `{}`){}",
            format::code(&bench.run),
            format::cell(&bench.format),
            counted_words(bench, input.runner.as_ref()),
        ),
        warmup: bench.warmup,
        outliers: match input.outliers {
            Some((0, pairs)) => format!("none of {pairs} pairs"),
            Some((k, pairs)) => format!("{k} of {pairs} pairs flagged (kept in the analysis)"),
            None => "n/a".to_owned(),
        },
        floors: floor_lines(input),
        rebench_rounds: bench.rounds,
        url: input.comparison_url.clone(),
    };
    template.render().expect("the comment template renders")
}

/// The comment's line about an acceptance: who, when, why, which rows, and any failing row it
/// does not cover.
fn acceptance_line(input: &CommentInput) -> Option<String> {
    let a = input.acceptance.as_ref()?;
    let rows: Vec<String> = a.rows.iter().take(10).map(|r| format::code(r)).collect();
    let more = a.rows.len().saturating_sub(10);
    let mut line = format!(
        "**Accepted** by {} on {} UTC for head `{}`: {} — rows: {}{}.",
        format::cell(&format!("@{}", a.by)),
        a.at.format("%Y-%m-%d %H:%M"),
        words::short_sha(&input.head_sha),
        format::cell(&a.reason),
        rows.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    let open = unaccepted_rows(input);
    if !open.is_empty() {
        line.push_str(&format!(
            " {} failing row(s) came after it and still fail the check; `/benchgate accept` again to cover them.",
            open.len()
        ));
    }
    Some(line)
}

fn headline(results: &[BenchmarkResult]) -> String {
    words::headline(results)
}

/// When an answer is expected, in rounds and time on this runner, while a gated row waits:
/// "An answer is expected in ~4 min (~20 more rounds at ~12 s a round)."
fn forecast(input: &CommentInput) -> Option<String> {
    let (needed, time) = still_needed(input)?;
    let rounds = words::count(needed as usize, "more round");
    let timed = time.zip(input.seconds_per_round.map(words::elapsed));
    let paren = match &timed {
        Some((time, pace)) => format!(" (~{time} at ~{pace} a round)"),
        None => String::new(),
    };
    let left = input.rounds_planned.saturating_sub(input.rounds_done);
    Some(match input.state {
        ComparisonState::Queued | ComparisonState::Running if needed <= left => match &timed {
            Some((time, pace)) => {
                format!("An answer is expected in ~{time} (~{rounds} at ~{pace} a round).")
            }
            None => format!("An answer is expected after ~{rounds}."),
        },
        ComparisonState::Queued | ComparisonState::Running => format!(
            "An answer needs ~{rounds}{paren}, more than the {left} left: comment \
             `/rebench {needed}` to add them."
        ),
        ComparisonState::Done => {
            let spent = match input.config.benchmark.budget_secs {
                Some(secs) if input.rounds_done < input.rounds_planned => format!(
                    "The suite's budget of {} is spent. ",
                    words::elapsed(secs as f64)
                ),
                _ => String::new(),
            };
            format!("{spent}An answer needs ~{rounds}{paren}: comment `/rebench {needed}`.")
        }
        _ => return None,
    })
}

/// The rounds the gated undecided row that needs most still needs, and their time at the
/// measured pace when it is known; `None` when no gated row waits on a forecast.
fn still_needed(input: &CommentInput) -> Option<(u64, Option<String>)> {
    let needed = input
        .results
        .iter()
        .filter(|r| r.gated && r.verdict == VerdictKind::NoResultYet)
        .filter_map(|r| r.rounds_needed)
        .max()?;
    let time = input
        .seconds_per_round
        .map(|pace| words::elapsed(needed as f64 * pace));
    Some((needed, time))
}

/// Whether a finished comparison stopped before its planned rounds because the gate had its
/// answer (the agent ends a job then).
fn answered_early(input: &CommentInput) -> bool {
    input.rounds_done < input.rounds_planned
        && benchgate_stats::outcome(&input.results, input.config.gate.fail_on)
            != GateOutcome::Undecided
}

/// What the reader must know about the base of a PR comparison: that the base branch moved on
/// since the PR branched (its newer commits are not measured), or that there is no merge base.
/// The comment, the check and the dashboard say it in these words.
pub fn branch_note(branch: &PullRequestBranch, base_sha: &str, change: &str) -> Option<String> {
    let base_ref = format::code(&branch.base_ref);
    if branch.no_merge_base {
        return Some(format!(
            "This {change} shares no commit with {base_ref}, so it is measured against \
             {base_ref}'s tip `{}`: every difference between the two counts as the {change}'s.",
            words::short_sha(base_sha)
        ));
    }
    if branch.base_ahead_by == 0 {
        return None;
    }
    Some(format!(
        "{base_ref} has {} since this {change} branched from it at `{}` (tip `{}` when \
         scheduled); they are not measured here: this is the {change}'s own change, as \
         \"Files changed\" shows it. Merge {base_ref} in (or rebase) to measure the {change} on \
         top of them; the merge queue measures both together.",
        words::count(branch.base_ahead_by as usize, "commit"),
        words::short_sha(base_sha),
        words::short_sha(&branch.base_tip)
    ))
}

fn floor_lines(input: &CommentInput) -> Vec<String> {
    input
        .floors
        .iter()
        .take(10)
        .map(|f| {
            format!(
                "{} {}: spread per pair {}, bias {}, from {} session(s), measured {}",
                format::code(&f.benchmark),
                format::cell(&f.metric),
                words::spread(f.spread_pct),
                words::spread(f.bias_pct),
                f.sessions,
                words::age((input.now - f.computed_at).num_seconds())
            )
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;

/// `; instructions counted by valgrind cachegrind, 2 runs per side (6 where they differ)` for a
/// suite with `counts`:
/// counts from two counters differ, so the comment names the one behind its rows.
fn counted_words(
    bench: &benchgate_api::agent::BenchmarkSpec,
    runner: Option<&RunnerInfo>,
) -> String {
    let Some(counts) = bench.counts else {
        return String::new();
    };
    let by = runner
        .and_then(|r| r.counter.as_deref())
        .map_or_else(|| "the runner's counter".to_owned(), format::cell);
    let what = match &bench.count_run {
        Some(run) => format!(", each benchmark by {}", format::code(run)),
        None => String::new(),
    };
    format!(
        "; {} counted by {by}, {} runs per side ({} where they differ){what}",
        counts.metric(),
        benchgate_api::counts::COUNTED_RUNS,
        benchgate_api::counts::MAX_COUNTED_RUNS
    )
}
