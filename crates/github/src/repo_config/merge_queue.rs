//! `[merge_queue]`: how the check of a GitHub merge group is decided, and how long it may wait
//! for a runner before it concludes with what was measured.

use std::fmt;
use std::ops::RangeInclusive;

use benchgate_api::agent::{MergeQueueMode, MergeQueueSettings, NoAnswerConclusion};
use serde::Deserialize;

/// Allowed `deadline`, in minutes: room for at least a short comparison, and no longer than
/// GitHub's longest merge-queue timeout (6 h), after which the check could no longer matter.
pub const DEADLINE_MINUTES: RangeInclusive<u32> = 5..=360;

/// `[merge_queue]`; every key is optional, and a file without the table gets the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MergeQueueConfig {
    /// `reuse` (restate a PR's verdict when that is exact, else measure), `measure` or `skip`.
    pub mode: MergeQueueMode,
    /// How long after GitHub asks before the check concludes with what was measured.
    pub deadline: Deadline,
    /// The conclusion of a check still undecided at its deadline.
    pub on_deadline: NoAnswerConclusion,
}

impl Default for MergeQueueConfig {
    fn default() -> Self {
        // The wire type holds the defaults, so the file and a stored comparison agree on them.
        let wire = MergeQueueSettings::default();
        MergeQueueConfig {
            mode: wire.mode,
            deadline: Deadline(wire.deadline_minutes),
            on_deadline: wire.on_deadline,
        }
    }
}

impl MergeQueueConfig {
    /// The settings as a merge-group comparison stores them.
    pub fn to_wire(&self) -> MergeQueueSettings {
        MergeQueueSettings {
            mode: self.mode,
            deadline_minutes: self.deadline.minutes(),
            on_deadline: self.on_deadline,
        }
    }
}

/// `deadline` in minutes, within [`DEADLINE_MINUTES`]: written `"45m"`, `"2h"` or `45`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "MinutesOrText")]
pub struct Deadline(pub(super) u32);

impl Deadline {
    /// The deadline in minutes.
    pub fn minutes(self) -> u32 {
        self.0
    }
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            m if m % 60 == 0 => write!(f, "{} h", m / 60),
            m => write!(f, "{m} min"),
        }
    }
}

/// What `deadline` may be written as.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected a deadline such as \"45m\", \"2h\" or a number of minutes"
)]
enum MinutesOrText {
    Minutes(i64),
    Text(String),
}

impl TryFrom<MinutesOrText> for Deadline {
    type Error = String;
    fn try_from(value: MinutesOrText) -> Result<Self, String> {
        let (minutes, written) = match value {
            MinutesOrText::Minutes(n) => (Some(n), n.to_string()),
            MinutesOrText::Text(s) => {
                let t = s.trim();
                let number = |n: &str| n.trim().parse::<i64>().ok();
                let minutes = t
                    .strip_suffix('m')
                    .and_then(number)
                    .or_else(|| t.strip_suffix('h').and_then(number)?.checked_mul(60));
                (minutes, format!("{s:?}"))
            }
        };
        let Some(minutes) = minutes else {
            return Err(format!(
                "{written} is not a deadline: write minutes (\"45m\"), hours (\"2h\") or a \
                 number of minutes"
            ));
        };
        u32::try_from(minutes)
            .ok()
            .filter(|m| DEADLINE_MINUTES.contains(m))
            .map(Deadline)
            .ok_or_else(|| {
                format!(
                    "deadline must be between {} and {} (GitHub's longest merge queue \
                     timeout), got {written}",
                    Deadline(*DEADLINE_MINUTES.start()),
                    Deadline(*DEADLINE_MINUTES.end()),
                )
            })
    }
}
