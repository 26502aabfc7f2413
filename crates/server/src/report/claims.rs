//! The PR's own claims in the report: each as the author stated it, with its answer.

use benchgate_stats::words;

use super::format;

/// Claims listed in the comment at most; the rest are on the comparison page.
const MAX_CLAIMS_SHOWN: usize = 10;

/// The row a claim was answered from, else the name it gave.
pub(super) fn claim_name(c: &benchgate_api::ClaimAnswer) -> Option<&str> {
    c.benchmark.as_deref().or(c.claimed_benchmark.as_deref())
}

/// "−20%", or "−30% to −25%" for a range.
pub(super) fn claimed_size(c: &benchgate_api::ClaimAnswer) -> String {
    let [lo, hi] = c.claimed_pct;
    if (lo - hi).abs() < 0.05 {
        words::percent(lo)
    } else {
        format!("{} to {}", words::percent(lo), words::percent(hi))
    }
}

/// The PR's claims as the comment lists them: "`parse` −20% claimed (benchstat; 10 runs per
/// side): **confirmed**, measured [−24.0%, −18.2%]". Names and the machine a description
/// names are the author's text, shown safely.
pub fn claim_lines(claims: &[benchgate_api::ClaimAnswer], change: &str) -> Vec<String> {
    let mut lines: Vec<String> = claims
        .iter()
        .take(MAX_CLAIMS_SHOWN)
        .map(|c| {
            let name =
                claim_name(c).map_or_else(|| format!("The {change} as a whole:"), format::code);
            let claimed = claimed_size(c);
            let answer = c
                .answer
                .as_deref()
                .map_or_else(|| "not answered".to_owned(), |a| format!("**{a}**"));
            let measured = c
                .measured_pct
                .filter(|m| m.iter().all(Option::is_some))
                .map(|m| format!(", measured {}", words::interval(m)))
                .unwrap_or_default();
            let evidence = std::iter::once(c.source.clone())
                .chain(c.notes.iter().cloned())
                .map(|n| format::cell(&n))
                .collect::<Vec<_>>()
                .join("; ");
            format!("{name} {claimed} claimed ({evidence}): {answer}{measured}")
        })
        .collect();
    if claims.len() > MAX_CLAIMS_SHOWN {
        lines.push(format!(
            "{} more claims are answered on the comparison page.",
            claims.len() - MAX_CLAIMS_SHOWN
        ));
    }
    lines
}

/// The description's lines that compare rather than claim: "not read as a claim: compares
/// `decode` with `serde_json` (line 4: “…”); if it is this PR's, restate it with
/// `/benchgate claim BENCHMARK CHANGE`". The author's words are shown safely.
pub fn not_read_lines(not_read: &[benchgate_claims::NotRead], change: &str) -> Vec<String> {
    not_read
        .iter()
        .take(MAX_CLAIMS_SHOWN)
        .map(|n| {
            let [a, b] = &n.compares;
            format!(
                "not read as a claim: compares {} with {} (line {}: {}); if it is this {change}'s, \
                 restate it with `/benchgate claim BENCHMARK CHANGE`",
                format::code(a.trim_matches('`')),
                format::code(b.trim_matches('`')),
                n.line,
                format::code(&shortened(&n.quote, 120)),
            )
        })
        .collect()
}

/// At most `max` characters of `text`, an ellipsis marking the cut.
fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
