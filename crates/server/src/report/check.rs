//! The check run of a comparison: its status, conclusion and title, per `[gate] fail_on`, the
//! claims under `claims = "require"`, and what was accepted.

use benchgate_api::agent::NoAnswerConclusion;
use benchgate_github::client::{CheckConclusion, CheckStatus};

use benchgate_stats::{GateOutcome, words};
use benchgate_store::model::ComparisonState;

use super::claims::{claim_name, claimed_size};
use super::{CommentInput, headline, still_needed, unaccepted_rows};

/// The check run's state for a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    pub status: CheckStatus,
    pub conclusion: Option<CheckConclusion>,
    pub title: String,
}

/// Under `[gate] claims = "require"`, the check's outcome when a claim decides it: failed by
/// the first claim not reproduced or opposite, neutral while one is not shown yet. `None`
/// when the claims leave the check to the gate (or are only reported).
fn claims_outcome(input: &CommentInput) -> Option<CheckOutcome> {
    use benchgate_claims::Answer;
    if input.config.gate.claims != benchgate_api::agent::ClaimsMode::Require {
        return None;
    }
    let answered =
        |c: &&benchgate_api::ClaimAnswer| c.answer.as_deref().and_then(Answer::from_words);
    let said = |c: &benchgate_api::ClaimAnswer, answer: Answer| {
        let name = claim_name(c).map_or_else(
            || format!("the {}", super::change_word(input.forge)),
            str::to_owned,
        );
        let claimed = claimed_size(c);
        let measured = c
            .measured_pct
            .map(|m| format!(", measured {}", words::interval(m)))
            .unwrap_or_default();
        format!("{name} {claimed} claimed: {}{measured}", answer.words())
    };
    if let Some((c, a)) = input
        .claims
        .iter()
        .find_map(|c| answered(&c).filter(|a| a.refutes()).map(|a| (c, a)))
    {
        return Some(CheckOutcome {
            status: CheckStatus::Completed,
            conclusion: Some(CheckConclusion::Failure),
            title: format!("a claim does not hold: {}", said(c, a)),
        });
    }
    let pending = input
        .claims
        .iter()
        .find(|c| answered(c) == Some(Answer::NotShownYet))?;
    Some(CheckOutcome {
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Neutral),
        title: format!("no answer yet: {}", said(pending, Answer::NotShownYet)),
    })
}

/// The check run's status, conclusion and title for a comparison, per `[gate] fail_on`; a
/// comparison that ends without an answer is neutral (a merge group's check decides for itself
/// what that means, by `[merge_queue] on_deadline`).
pub fn check_outcome(input: &CommentInput) -> CheckOutcome {
    outcome_with(input, NoAnswerConclusion::Neutral)
}

/// [`check_outcome`] for a pull request's own check: a comparison that ends without an answer
/// concludes as `[gate] on_no_answer` says (neutral, or failure to fail closed).
pub fn pull_request_check_outcome(input: &CommentInput) -> CheckOutcome {
    outcome_with(input, input.config.gate.on_no_answer)
}

fn outcome_with(input: &CommentInput, on_no_answer: NoAnswerConclusion) -> CheckOutcome {
    let done = |conclusion, title: String| CheckOutcome {
        status: CheckStatus::Completed,
        conclusion: Some(conclusion),
        title,
    };
    let progress = format!("{} of {} rounds", input.rounds_done, input.rounds_planned);
    // A comparison that ends without an answer passes a required check (neutral) unless the
    // repository asked to fail closed.
    let no_answer = |title: String| match on_no_answer {
        NoAnswerConclusion::Neutral => done(CheckConclusion::Neutral, title),
        NoAnswerConclusion::Failure => done(
            CheckConclusion::Failure,
            format!("{title} (on_no_answer = \"failure\")"),
        ),
    };
    match input.state {
        ComparisonState::Queued if input.awaiting_approval && input.rounds_planned == 0 => done(
            CheckConclusion::ActionRequired,
            format!(
                "waiting for a maintainer's /rebench (fork {})",
                super::change_word(input.forge)
            ),
        ),
        ComparisonState::Queued => CheckOutcome {
            status: CheckStatus::Queued,
            conclusion: None,
            title: match &input.queue {
                Some(wait) => super::queue::queue_words(wait, str::to_owned),
                None => format!("queued, {progress}"),
            },
        },
        ComparisonState::Running => CheckOutcome {
            status: CheckStatus::InProgress,
            conclusion: None,
            title: match still_needed(input) {
                Some((needed, Some(time)))
                    if needed <= input.rounds_planned.saturating_sub(input.rounds_done) =>
                {
                    format!(
                        "running, {progress}, answer expected in ~{time}: {}",
                        headline(&input.results)
                    )
                }
                _ => format!("running, {progress}: {}", headline(&input.results)),
            },
        },
        ComparisonState::Superseded => done(
            CheckConclusion::Cancelled,
            "superseded by a newer push".to_owned(),
        ),
        ComparisonState::Cancelled => done(
            CheckConclusion::Cancelled,
            format!("{} closed or made a draft", super::change_word(input.forge)),
        ),
        ComparisonState::Failed => no_answer("the benchmark jobs failed".to_owned()),
        ComparisonState::Done if input.identical_build.is_some() => {
            let build = input.identical_build.as_ref().expect("matched");
            done(
                CheckConclusion::Success,
                format!(
                    "identical build: {} byte-identical, nothing to measure",
                    words::count(build.files.len(), "artifact")
                ),
            )
        }
        ComparisonState::Done => {
            let title = headline(&input.results);
            // A failing gate speaks first; then a claim that does not hold fails the check,
            // and one not shown yet keeps a passing gate from passing.
            let gate = benchgate_stats::outcome(&input.results, input.config.gate.fail_on);
            if let Some(claimed) = claims_outcome(input)
                && (gate == GateOutcome::Pass
                    || gate == GateOutcome::Undecided
                        && claimed.conclusion == Some(CheckConclusion::Failure))
            {
                return claimed;
            }
            // The one gate decision, shared with `benchgate compare`/`analyze`.
            match benchgate_stats::outcome(&input.results, input.config.gate.fail_on) {
                // Accepted only when every failing row was: a row that fails after the
                // acceptance still fails the check.
                GateOutcome::Fail => match &input.acceptance {
                    Some(a) if unaccepted_rows(input).is_empty() => done(
                        CheckConclusion::Success,
                        format!("accepted by @{}: {}", a.by, a.reason),
                    ),
                    _ => done(CheckConclusion::Failure, title),
                },
                // Not a pass: a script or a maintainer reading only the title must see it.
                GateOutcome::Undecided => no_answer(match still_needed(input) {
                    Some((needed, time)) => format!(
                        "no answer yet (needs ~{}{}): {title}",
                        words::count(needed as usize, "more round"),
                        time.map(|t| format!(", ~{t}")).unwrap_or_default()
                    ),
                    None => format!("no answer yet: {title}"),
                }),
                GateOutcome::Pass => done(CheckConclusion::Success, title),
            }
        }
    }
}
