//! The report's "where the time went" section: the profile job's state, or the functions whose
//! share of samples changed most between base and head, with a link to the differential flame
//! graph. Profiled runs are never samples; the section says so.

use super::format;
use benchgate_stats::words;

/// Functions listed in the comment; the SVG and the JSON have every one.
pub const FUNCTIONS_SHOWN: usize = 8;

/// A comparison's profile as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileView {
    /// Asked (by the verdict or `/benchgate profile`), not stored yet.
    Pending { requested_by: String },
    /// The profile job failed.
    Failed { reason: String },
    /// The runner has no usable profiler; one line says why.
    Unavailable { runner: String, reason: String },
    /// Stacks of both sides, compared.
    Ready(ProfileSummary),
}

/// What a stored profile says, computed when the report is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSummary {
    pub runner: String,
    /// `cycles`, or `cpu-clock` where the runner has no hardware counters.
    pub event: String,
    pub runs: i64,
    pub base_samples: u64,
    pub head_samples: u64,
    /// Ordered by the size of the change, largest first.
    pub functions: Vec<benchgate_profile::FunctionChange>,
    /// A side's binary has frames without symbols (shown as addresses).
    pub lacks_symbols: bool,
    /// The differential flame graph.
    pub svg_url: String,
}

/// A stored profile as the report shows it: its stacks compared, or why there are none.
pub fn view(
    profile: benchgate_store::StoredProfile,
    runner: String,
    comparison_url: &str,
) -> ProfileView {
    let Some(event) = profile.event else {
        return ProfileView::Unavailable {
            runner,
            reason: profile
                .unavailable
                .unwrap_or_else(|| "no profiler on the runner".into()),
        };
    };
    // The agent's stacks were checked when stored; unreadable ones show as empty.
    let parse = |text: &str| benchgate_profile::Folded::parse(text).unwrap_or_default();
    let (base, head) = (parse(&profile.base_folded), parse(&profile.head_folded));
    ProfileView::Ready(ProfileSummary {
        runner,
        event,
        runs: profile.runs,
        base_samples: base.total(),
        head_samples: head.total(),
        functions: benchgate_profile::changes(&base, &head),
        lacks_symbols: benchgate_profile::lacks_symbols(&base)
            || benchgate_profile::lacks_symbols(&head),
        svg_url: format!("{comparison_url}/profile.svg"),
    })
}

/// How a profile was taken and what it counts: perf's samples of `event`, or callgrind's exact
/// instruction counts (a gungraun suite's own output).
pub fn source(event: &str) -> (String, &'static str) {
    if event.starts_with("callgrind") {
        (
            "callgrind's exact instruction counts".to_owned(),
            "instructions",
        )
    } else {
        (format!("perf `{}`", format::cell(event)), "samples")
    }
}

/// The section's lines (Markdown), empty when there is no profile.
pub fn lines(view: Option<&ProfileView>) -> Vec<String> {
    let Some(view) = view else {
        return Vec::new();
    };
    match view {
        ProfileView::Pending { requested_by } => vec![format!(
            "**Profile:** queued ({}); profiled runs of both sides follow the verdict and are never samples.",
            format::cell(&asked_by(requested_by))
        )],
        ProfileView::Failed { reason } => {
            vec![format!("**Profile:** failed: {}.", format::cell(reason))]
        }
        ProfileView::Unavailable { runner, reason } => vec![format!(
            "**Profile:** not taken on {}: {}.",
            format::code(runner),
            format::cell(reason)
        )],
        ProfileView::Ready(p) => ready(p),
    }
}

fn asked_by(requested_by: &str) -> String {
    if requested_by == "verdict" {
        "asked by the slower verdict".to_owned()
    } else {
        format!("asked by @{requested_by}")
    }
}

fn ready(p: &ProfileSummary) -> Vec<String> {
    let (how, unit) = source(&p.event);
    let mut out = vec![format!(
        "**Where the time went** — {} on {}, {} run(s) per side ({} base and {} head {unit}; profiled runs are not samples of the verdict). Change in share of {unit}, head minus base ([differential flame graph]({})):",
        how,
        format::code(&p.runner),
        p.runs,
        p.base_samples,
        p.head_samples,
        p.svg_url
    )];
    if p.functions.is_empty() {
        out.push(String::new());
        out.push("No function's share changed.".to_owned());
        return out;
    }
    out.push(String::new());
    out.push("| self | total | function |".to_owned());
    out.push("|---:|---:|---|".to_owned());
    for f in p.functions.iter().take(FUNCTIONS_SHOWN) {
        out.push(format!(
            "| {} | {} | {} |",
            words::percentage_points(f.self_pp),
            words::percentage_points(f.total_pp),
            format::code_cell(&f.function)
        ));
    }
    if p.lacks_symbols {
        out.push(String::new());
        out.push(
            "Some frames have no symbols (shown as addresses): build with debug info (`debug = true` or `-g`) to name them."
                .to_owned(),
        );
    }
    out
}
