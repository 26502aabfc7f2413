//! The sentence forms that name their metric (issue 57): a verb and its object ("reduces
//! memory usage by ~33%"), fractions ("halves the allocations"), and two values ("from 28.6 MB
//! to 25.1 MB"). Each pushes its claims and the byte spans it read, so a later form does not
//! read the same words again.

use crate::prose::{self, AND_BY, ARROW, FROM_TO, HALVES, Size, TO_FRACTION, VERB_BY, Way};
use crate::prose::{claim, name_before, name_in};
use crate::{Claim, Metric};

/// Whether `start..end` overlaps a span already read.
pub(crate) fn overlaps(spans: &[(usize, usize)], start: usize, end: usize) -> bool {
    spans.iter().any(|(s, e)| start < *e && *s < end)
}

/// "reduces memory usage by ~33%", "allocations reduced about 75%": the verb says the way,
/// its object (or the subject before it) the metric.
pub(crate) fn verb_by(sentence: &str, spans: &mut Vec<(usize, usize)>, out: &mut Vec<Claim>) {
    for c in VERB_BY.captures_iter(sentence) {
        let whole = c.get(0).expect("match");
        let obj = &c["obj"];
        // "increase the timeout 2x" names no change of a metric: a size needs its "by".
        if c.name("by").is_none() && !obj.trim().is_empty() {
            continue;
        }
        if overlaps(spans, whole.start(), whole.end()) {
            continue;
        }
        let Some(way) = Way::of(&c["verb"]) else {
            continue;
        };
        let subject = &sentence[..whole.start()];
        let tail_end = (whole.end() + 40).min(sentence.len());
        let tail = sentence.get(whole.end()..tail_end).unwrap_or("");
        let metric = prose::metric_named(obj, sentence)
            .or_else(|| prose::metric_named(subject, sentence))
            .or_else(|| prose::metric_named(tail, sentence))
            .or_else(|| (way == Way::Better).then_some(Metric::Time));
        let (Some(metric), Some(size)) = (metric, prose::size_of(&c)) else {
            continue;
        };
        let Some(pct) = prose::change(metric, way, size, prose::speed_word(obj)) else {
            continue;
        };
        spans.push((whole.start(), whole.end()));
        let name = name_in(obj).or_else(|| name_before(sentence, whole.start()));
        out.push(Claim {
            metric,
            ..claim(name.clone(), pct)
        });
        // "reduce allocated objects by ~60% and CPU time by 10%": the verb goes on.
        // "… and increases throughput by 20%" has its own verb: read on its own.
        let and_by = AND_BY.captures(&sentence[whole.end()..]).filter(|m| {
            let first = m["obj"].split_whitespace().next().unwrap_or("");
            Way::of(first).is_none()
        });
        if let Some(more) = and_by {
            let metric = prose::metric_named(&more["obj"], sentence).unwrap_or(metric);
            if let Some(size) = prose::size_of(&more)
                && let Some(pct) = prose::change(metric, way, size, false)
            {
                let end = whole.end() + more.get(0).expect("match").end();
                spans.push((whole.end(), end));
                out.push(Claim {
                    metric,
                    ..claim(name_in(&more["obj"]).or(name), pct)
                });
            }
        }
    }
}

/// "halves the allocations", "memory usage to ~ half".
pub(crate) fn fractions(sentence: &str, spans: &mut Vec<(usize, usize)>, out: &mut Vec<Claim>) {
    let found = HALVES
        .captures_iter(sentence)
        .chain(TO_FRACTION.captures_iter(sentence));
    for c in found {
        let whole = c.get(0).expect("match");
        if overlaps(spans, whole.start(), whole.end()) {
            continue;
        }
        let subject = &sentence[..whole.start()];
        let Some(metric) = prose::metric_named(&c["obj"], sentence)
            .or_else(|| prose::metric_named(subject, sentence))
        else {
            continue;
        };
        // "to half" is half of it left, a fall of 50%; "to a third", 67%.
        let left = match c.name("frac").map(|f| f.as_str().to_lowercase()) {
            Some(f) if f.contains("third") => 100.0 / 3.0,
            Some(f) if f.contains("quarter") => 25.0,
            _ => 50.0,
        };
        let Some(pct) = prose::change(metric, Way::Less, Size::Percent([100.0 - left; 2]), false)
        else {
            continue;
        };
        spans.push((whole.start(), whole.end()));
        out.push(Claim {
            metric,
            ..claim(name_in(&c["obj"]), pct)
        });
    }
}

/// "from 28.6 MB (main) to 25.1 MB", "6_342 -> 4_741 (25%)": the change the two values make,
/// unless a size already read says the same.
pub(crate) fn from_to(sentence: &str, spans: &mut Vec<(usize, usize)>, out: &mut Vec<Claim>) {
    let found = FROM_TO
        .captures_iter(sentence)
        .chain(ARROW.captures_iter(sentence));
    for c in found {
        let whole = c.get(0).expect("match");
        if overlaps(spans, whole.start(), whole.end()) {
            continue;
        }
        let Some((metric, pct)) = prose::from_to(&c, sentence) else {
            continue;
        };
        spans.push((whole.start(), whole.end()));
        let said = out
            .iter()
            .any(|o| o.metric == metric && (o.change_pct[0] - pct).abs() <= 2.0);
        if !said {
            out.push(Claim {
                metric,
                ..claim(name_in(&sentence[..whole.start()]), [pct, pct])
            });
        }
    }
}
