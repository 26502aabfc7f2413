//! The report's status line: the comparison's state in words (where a queued one waits, how
//! far a running one got) and the two commits measured.

use benchgate_stats::words;
use benchgate_store::model::ComparisonState;

use super::{CommentInput, answered_early, format, queue};

/// "**queued: 3rd in line for `linux-x64` (~6 min of work ahead), …** · base `c0ffee1` (merge
/// base with `main`) → head `…`".
pub(super) fn status_line(input: &CommentInput) -> String {
    let progress = format!("{} of {} rounds", input.rounds_done, input.rounds_planned);
    let state = match input.state {
        ComparisonState::Queued if input.rounds_planned == 0 => "waiting".to_owned(),
        ComparisonState::Queued => match &input.queue {
            Some(wait) => queue::queue_words(wait, format::code),
            None => format!("queued, {progress}"),
        },
        ComparisonState::Running => format!("running, {progress}"),
        ComparisonState::Done if input.identical_build.is_some() => {
            "done, identical build: no round needed".to_owned()
        }
        ComparisonState::Done if answered_early(input) => format!(
            "done, answered after {} of {} rounds",
            input.rounds_done, input.rounds_planned
        ),
        ComparisonState::Done => format!("done, {progress}"),
        ComparisonState::Failed => format!("failed, {progress}"),
        ComparisonState::Superseded => "superseded by a newer push".to_owned(),
        ComparisonState::Cancelled => format!(
            "cancelled (the {} was closed or made a draft)",
            super::change_word(input.forge)
        ),
    };
    let base = match &input.branch {
        Some(b) if !b.no_merge_base => format!(
            "base `{}` (merge base with {}) → head `{}`",
            words::short_sha(&input.base_sha),
            format::code(&b.base_ref),
            words::short_sha(&input.head_sha)
        ),
        _ => format!(
            "base `{}` → head `{}`",
            words::short_sha(&input.base_sha),
            words::short_sha(&input.head_sha)
        ),
    };
    format!("**{state}** · {base}")
}
