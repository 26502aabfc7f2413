//! A culprit search in words: the episode's issue, the comment on the named PR and the one-line
//! summary of tables.

use benchgate_stats::words::{self, short_sha};
use benchgate_store::model::{Bisection, BisectionProbe, ProbeState, RangeCommit};

use super::outcome::{OutcomeKind, SearchOutcome};

/// A squash commit's title without the ` (#N)` its PR number already says; nothing of a merge
/// commit's "Merge pull request #N from …".
pub(super) fn title_without_pr(title: &str) -> &str {
    if title.starts_with("Merge pull request #") {
        return "";
    }
    match title.rfind(" (#") {
        Some(at) if title.ends_with(')') => &title[..at],
        _ => title,
    }
}

/// A commit as the reports name it: `c5f2a91 (#482)`.
pub(super) fn commit_name(c: &RangeCommit) -> String {
    match c.pr {
        Some(pr) => format!("`{}` (#{pr})", short_sha(&c.sha)),
        None => format!("`{}`", short_sha(&c.sha)),
    }
}

pub(super) fn interval_words(lower: Option<f64>, upper: Option<f64>) -> String {
    let bound = |b: Option<f64>| b.filter(|b| b.is_finite()).map(|b| b * 100.0);
    words::interval([bound(lower), bound(upper)])
}

/// The search as the episode's issue and the dashboard word it: how it ended (or where it
/// stands), then each probe.
pub fn describe(search: &Bisection, probes: &[BisectionProbe]) -> String {
    let outcome = search.outcome.as_ref();
    let commits = search.commits.as_deref().unwrap_or_default();
    let name = |sha: &str| {
        commits
            .iter()
            .find(|c| c.sha == sha)
            .map(commit_name)
            .unwrap_or_else(|| format!("`{}`", short_sha(sha)))
    };
    let rounds: i64 = probes.iter().map(|p| p.rounds).sum();
    let mut out = String::from("### Which commit\n\n");
    match &outcome {
        None => {
            let running = probes.iter().find(|p| p.state == ProbeState::Running);
            out.push_str(&format!(
                "Searching for the commit that did it between {} and {}{}: {} probes so far, \
                 {rounds} rounds{}.\n",
                name(&search.good_sha),
                name(&search.bad_sha),
                match commits.len() {
                    0 => String::new(),
                    n => format!(" ({} commits)", n - 1),
                },
                probes.len(),
                match running {
                    Some(p) => format!(
                        "; now {} against {}",
                        name(&p.newer_sha),
                        name(&p.older_sha)
                    ),
                    None => String::new(),
                }
            ));
        }
        Some(o) => {
            let cost = format!(
                "{} probes and {} rounds over {} commits",
                o.probes, o.rounds, o.commits
            );
            let change = |o: &SearchOutcome| {
                format!(
                    "{} {}",
                    words::percent(o.change.unwrap_or(0.0) * 100.0),
                    interval_words(o.lower, o.upper)
                )
            };
            let line = match o.kind {
                OutcomeKind::Culprit => format!(
                    "**Culprit: {} {}** on its own{}. Found in {cost}; a named culprit is \
                     wrong at most {:.0}% of the time.",
                    o.commit.as_ref().map(commit_name).unwrap_or_default(),
                    change(o),
                    o.commit
                        .as_ref()
                        .map(|c| title_without_pr(&c.title))
                        .filter(|t| !t.is_empty())
                        .map(|t| format!(", \"{t}\""))
                        .unwrap_or_default(),
                    o.alpha * 100.0
                ),
                OutcomeKind::Spread => format!(
                    "**No single commit**: the slowdown builds up over the range. {} takes it \
                     past the search's threshold (3/8 to 3/4 of it) with {} of its own; the \
                     probes below give it commit by commit ({cost}).",
                    o.commit.as_ref().map(commit_name).unwrap_or_default(),
                    change(o)
                ),
                OutcomeKind::NoRegression => format!(
                    "**Not confirmed**: {} against {} again shows {} ({cost}).",
                    name(&search.bad_sha),
                    name(&search.good_sha),
                    change(o)
                ),
                OutcomeKind::Undecided | OutcomeKind::Skipped => {
                    let (after, upto) = (
                        o.after.clone().unwrap_or_default(),
                        o.upto.clone().unwrap_or_default(),
                    );
                    let between = commits
                        .iter()
                        .position(|c| c.sha == after)
                        .zip(commits.iter().position(|c| c.sha == upto))
                        .map_or(0, |(a, u)| u.saturating_sub(a));
                    let why = if o.kind == OutcomeKind::Undecided {
                        "a probe stayed undecided at its round limit"
                    } else {
                        "commits there could not be measured"
                    };
                    format!(
                        "**Narrowed to {between} commits**: after {} up to {}; {why} \
                         ({cost}).",
                        name(&after),
                        name(&upto)
                    )
                }
                OutcomeKind::Failed => format!(
                    "**Search failed**: {}.",
                    o.reason.as_deref().unwrap_or("no reason given")
                ),
            };
            out.push_str(&line);
            out.push('\n');
            for s in &o.skipped {
                out.push_str(&format!("\nSkipped {}: {}.", name(&s.sha), s.note));
            }
            if !o.skipped.is_empty() {
                out.push('\n');
            }
        }
    }
    if !probes.is_empty() {
        out.push_str("\n| probe | compared | change | rounds | |\n|---|---|---|---|---|\n");
        for p in probes {
            let change = match (p.lower, p.upper) {
                (Some(l), Some(u)) => format!(
                    "{} {}",
                    words::percent((0.5 * (l + u)).exp_m1() * 100.0),
                    interval_words(Some(l.exp_m1()), Some(u.exp_m1()))
                ),
                _ => "–".to_owned(),
            };
            out.push_str(&format!(
                "| {} | {} → {} | {change} | {} | {} |\n",
                p.seq + 1,
                name(&p.older_sha),
                name(&p.newer_sha),
                p.rounds,
                match p.state {
                    ProbeState::Running => "running".to_owned(),
                    ProbeState::Decided => "decided".to_owned(),
                    ProbeState::Limit | ProbeState::Skipped => p
                        .note
                        .clone()
                        .unwrap_or_else(|| p.state.as_str().to_owned()),
                }
            ));
        }
    }
    out
}

/// The comment on the PR a search named.
pub(super) fn culprit_comment(
    args: &crate::GitHubConfig,
    repository: &str,
    search: &Bisection,
    view: &SearchOutcome,
) -> String {
    let commit = view.commit.as_ref().map(commit_name).unwrap_or_default();
    format!(
        "**benchgate: this merge made `{}` ({}) slower on `{}`**: {commit} alone is **{}** \
         {} (on `{}`).\n\nA search of {} commits between `{}` and `{}` named it, in {} \
         interleaved probes and {} rounds; a named culprit is wrong at most {:.0}% of the \
         time. History: {}/history?repository={}&branch={}",
        search.benchmark,
        search.metric,
        search.series.branch,
        words::percent(view.change.unwrap_or(0.0) * 100.0),
        interval_words(view.lower, view.upper),
        search.series.runner_label,
        view.commits,
        short_sha(&search.good_sha),
        short_sha(&search.bad_sha),
        view.probes,
        view.rounds,
        view.alpha * 100.0,
        args.public_url.trim_end_matches('/'),
        repository,
        search.series.branch,
    )
}

/// One line for a table: `culprit c5f2a91 (#482) +4.1% [+2.3%, +6.0%]`, or where it stands.
pub fn summary(outcome: Option<&SearchOutcome>, probes: &[BisectionProbe]) -> String {
    let Some(o) = outcome else {
        let rounds: i64 = probes.iter().map(|p| p.rounds).sum();
        return format!("searching: {} probes, {rounds} rounds so far", probes.len());
    };
    let cost = format!("{} probes, {} rounds", o.probes, o.rounds);
    let change = || {
        format!(
            "{} {}",
            words::percent(o.change.unwrap_or(0.0) * 100.0),
            interval_words(o.lower, o.upper)
        )
    };
    let commit = || o.commit.as_ref().map(commit_name).unwrap_or_default();
    let text = match o.kind {
        OutcomeKind::Culprit => format!("culprit {} {} ({cost})", commit(), change()),
        OutcomeKind::Spread => format!("no single commit: builds up ({cost})"),
        OutcomeKind::NoRegression => format!("not confirmed: {} ({cost})", change()),
        OutcomeKind::Undecided => format!(
            "undecided between {} and {} ({cost})",
            short_sha(o.after.as_deref().unwrap_or_default()),
            short_sha(o.upto.as_deref().unwrap_or_default())
        ),
        OutcomeKind::Skipped => format!(
            "narrowed to {}..{}, with commits skipped ({cost})",
            short_sha(o.after.as_deref().unwrap_or_default()),
            short_sha(o.upto.as_deref().unwrap_or_default())
        ),
        OutcomeKind::Failed => format!("failed: {}", o.reason.as_deref().unwrap_or("")),
    };
    text.replace('`', "")
}
