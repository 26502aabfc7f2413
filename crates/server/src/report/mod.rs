//! The PR comment and the check run's summary: one Markdown report per comparison and runner
//! label, rendered from `templates/comment.md`. [`render_comment`] is pure (the demo prints
//! exactly what would be posted); [`load`] gathers its input from the store.

mod format;
mod load;
pub mod watch;

use askama::Template;
use benchgate_api::agent::ComparisonConfig;
use benchgate_api::{BenchmarkResult, VerdictKind};
use benchgate_github::client::{CheckConclusion, CheckStatus, comment_marker};
use benchgate_store::model::ComparisonState;
use chrono::{DateTime, Utc};

pub use load::{LoadedReport, load};

/// GitHub refuses comment bodies longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// At most this many diagnostic notes in a comment; the JSON has every one.
pub const NOTES_SHOWN: usize = 10;

/// The runner that produced the headline numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerInfo {
    pub name: String,
    /// One line: CPU, cores, kernel, governor.
    pub fingerprint: Option<String>,
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
    pub config: ComparisonConfig,
    pub runner: Option<RunnerInfo>,
    pub results: Vec<BenchmarkResult>,
    /// Margin M per result (percent), same order as `results`.
    pub margins_pct: Vec<f64>,
    /// Pairs flagged as outliers, and pairs in all.
    pub outliers: Option<(usize, usize)>,
    pub floors: Vec<FloorInfo>,
    /// Changed files under `[benchmark] paths`.
    pub benchmark_files_changed: Vec<String>,
    /// A fork PR waiting for a maintainer's `/rebench`.
    pub awaiting_approval: bool,
    /// Why the jobs failed, when they did.
    pub failure: Option<String>,
    pub now: DateTime<Utc>,
}

/// The check run's state for a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    pub status: CheckStatus,
    pub conclusion: Option<CheckConclusion>,
    pub title: String,
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
    id: i64,
    label: String,
    headline: String,
    status_line: String,
    awaiting_approval: bool,
    failure: Option<String>,
    rows: &'a [Row],
    rows_cut: usize,
    geomean: Option<String>,
    notes: &'a [String],
    benchmark_files_changed: String,
    runner: String,
    workload: String,
    warmup: u32,
    outliers: String,
    floors: Vec<String>,
    rebench_rounds: u32,
    url: String,
}

/// The comment's Markdown, hidden marker included, under [`COMMENT_LIMIT`] characters (rows
/// past the limit are cut and the dashboard link carries the rest).
pub fn render_comment(input: &CommentInput) -> String {
    let rows: Vec<Row> = input
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| Row {
            name: format::code_cell(&r.name),
            metric: if r.gated {
                format::cell(&r.metric)
            } else {
                format!("{} (not gated)", format::cell(&r.metric))
            },
            base: format::value(r.base_center, &r.unit),
            head: format::value(r.head_center, &r.unit),
            change: format::change(r),
            rounds: r.n,
            verdict: format::verdict(r, input.margins_pct.get(i).copied().unwrap_or(1.0)),
        })
        .collect();
    let notes = note_lines(&input.results);
    let mut shown = rows.len();
    loop {
        let body = render_rows(input, &rows[..shown], rows.len() - shown, &notes);
        if body.chars().count() <= COMMENT_LIMIT {
            return body;
        }
        if shown == 0 {
            // Notes are capped, but ten of them with 512-byte names could still tip it over.
            return render_rows(input, &[], rows.len(), &[]);
        }
        // Cut a quarter of what is left each time: few renders even for thousands of rows.
        shown -= (shown / 4).max(1);
    }
}

/// The line under the table: the geomean of the gated time rows, a summary and never a gate.
fn geomean_line(results: &[BenchmarkResult]) -> Option<String> {
    let g = benchgate_stats::geomean_row(results)?;
    Some(format!(
        "Geomean of {} benchmarks' time: {} — a summary, not a verdict; it never fails the check.",
        g.benchmarks,
        format::percent(g.change_pct)
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

fn render_rows(input: &CommentInput, rows: &[Row], rows_cut: usize, notes: &[String]) -> String {
    let bench = &input.config.benchmark;
    let template = CommentTemplate {
        marker: comment_marker(&input.runner_label),
        id: input.comparison_id,
        label: format::cell(&input.runner_label),
        headline: headline(&input.results),
        status_line: status_line(input),
        awaiting_approval: input.awaiting_approval && input.rounds_planned == 0,
        failure: input.failure.as_deref().map(format::cell),
        rows,
        rows_cut,
        geomean: geomean_line(&input.results),
        notes,
        benchmark_files_changed: input
            .benchmark_files_changed
            .iter()
            .take(20)
            .map(|f| format::code(f))
            .collect::<Vec<_>>()
            .join(", "),
        runner: match &input.runner {
            Some(r) => match &r.fingerprint {
                Some(f) => format!("{} — {}", format::code(&r.name), format::cell(f)),
                None => format!("{} (no fingerprint reported)", format::code(&r.name)),
            },
            None => "not claimed yet".to_owned(),
        },
        workload: format!(
            "{} (format `{}`)",
            format::code(&bench.run),
            format::cell(&bench.format)
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

/// `1 slower, 2 no change · 2 more not gated` — the gated rows' verdicts counted, for the
/// heading and the check's title (a slower peak memory must not read like a failed gate).
fn headline(results: &[BenchmarkResult]) -> String {
    if results.is_empty() {
        return "no results yet".to_owned();
    }
    let gated: Vec<&BenchmarkResult> = results.iter().filter(|r| r.gated).collect();
    let count = |k: VerdictKind| gated.iter().filter(|r| r.verdict == k).count();
    let parts = [
        (VerdictKind::Slower, "slower"),
        (VerdictKind::Faster, "faster"),
        (VerdictKind::Equivalent, "no change"),
        (VerdictKind::NoResultYet, "no result yet"),
        (VerdictKind::BelowResolution, "below resolution"),
        (VerdictKind::Exact, "exact"),
    ];
    let parts = parts
        .iter()
        .filter_map(|(k, word)| {
            Some(count(*k))
                .filter(|n| *n > 0)
                .map(|n| format!("{n} {word}"))
        })
        .collect::<Vec<_>>()
        .join(", ");
    match results.len() - gated.len() {
        0 => parts,
        n if parts.is_empty() => format!("{n} not gated"),
        n => format!("{parts} · {n} more not gated"),
    }
}

fn status_line(input: &CommentInput) -> String {
    let progress = format!("{} of {} rounds", input.rounds_done, input.rounds_planned);
    let state = match input.state {
        ComparisonState::Queued if input.rounds_planned == 0 => "waiting".to_owned(),
        ComparisonState::Queued => format!("queued, {progress}"),
        ComparisonState::Running => format!("running, {progress}"),
        ComparisonState::Done => format!("done, {progress}"),
        ComparisonState::Failed => format!("failed, {progress}"),
        ComparisonState::Superseded => "superseded by a newer push".to_owned(),
        ComparisonState::Cancelled => "cancelled (the PR was closed)".to_owned(),
    };
    format!(
        "**{state}** · base `{}` → head `{}`",
        short(&input.base_sha),
        short(&input.head_sha)
    )
}

fn floor_lines(input: &CommentInput) -> Vec<String> {
    input
        .floors
        .iter()
        .take(10)
        .map(|f| {
            format!(
                "{} {}: spread per pair {:.2}%, bias {:.2}%, from {} session(s), measured {}",
                format::code(&f.benchmark),
                format::cell(&f.metric),
                f.spread_pct,
                f.bias_pct,
                f.sessions,
                format::age((input.now - f.computed_at).num_seconds())
            )
        })
        .collect()
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

/// The check run's status, conclusion and title for a comparison, per `[gate] fail_on`.
pub fn check_outcome(input: &CommentInput) -> CheckOutcome {
    let done = |conclusion, title: String| CheckOutcome {
        status: CheckStatus::Completed,
        conclusion: Some(conclusion),
        title,
    };
    let progress = format!("{} of {} rounds", input.rounds_done, input.rounds_planned);
    match input.state {
        ComparisonState::Queued if input.awaiting_approval && input.rounds_planned == 0 => done(
            CheckConclusion::ActionRequired,
            "waiting for a maintainer's /rebench (fork PR)".to_owned(),
        ),
        ComparisonState::Queued => CheckOutcome {
            status: CheckStatus::Queued,
            conclusion: None,
            title: format!("queued, {progress}"),
        },
        ComparisonState::Running => CheckOutcome {
            status: CheckStatus::InProgress,
            conclusion: None,
            title: format!("running, {progress}: {}", headline(&input.results)),
        },
        ComparisonState::Superseded => done(
            CheckConclusion::Cancelled,
            "superseded by a newer push".to_owned(),
        ),
        ComparisonState::Cancelled => done(CheckConclusion::Cancelled, "PR closed".to_owned()),
        ComparisonState::Failed => done(
            CheckConclusion::Neutral,
            "the benchmark jobs failed".to_owned(),
        ),
        ComparisonState::Done => {
            let title = headline(&input.results);
            let fail_on = input.config.gate.fail_on.as_str();
            // Only the rows that gate count (each benchmark's time metric, selected by e-BH);
            // CPU time, memory and build time are shown beside them.
            let gating: Vec<&BenchmarkResult> = input.results.iter().filter(|r| r.gated).collect();
            // A deterministic count that grew is exact: no interval, no selection needed.
            let fails = gating.iter().any(|r| {
                let regressed = match r.verdict {
                    VerdictKind::Slower => r.selected,
                    VerdictKind::Exact => r.change_pct > 0.0,
                    _ => false,
                };
                regressed
                    && match fail_on {
                        "never" => false,
                        "practical-regression" => r.practical,
                        _ => true,
                    }
            });
            let undecided = gating.is_empty()
                || gating.iter().any(|r| {
                    matches!(
                        r.verdict,
                        VerdictKind::NoResultYet | VerdictKind::BelowResolution
                    )
                });
            if fails {
                done(CheckConclusion::Failure, title)
            } else if undecided {
                done(CheckConclusion::Neutral, title)
            } else {
                done(CheckConclusion::Success, title)
            }
        }
    }
}

#[cfg(test)]
mod tests;
