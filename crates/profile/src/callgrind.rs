//! Callgrind output (what gungraun and iai-callgrind leave beside their results) as folded
//! stacks: each function's exclusive cost in the file's first event (instructions, `Ir`),
//! counted exactly rather than sampled. Callgrind keeps call edges, not whole stacks, so each
//! function is one frame under `root`: its self share is exact, its total share equals it.

use crate::{Folded, ProfileError};
use std::collections::{BTreeMap, HashMap};

/// Folds one callgrind output file under the frame `root` (e.g. the benchmark's name).
pub fn collapse_callgrind(text: &str, root: &str) -> Result<Folded, ProfileError> {
    let bad = |line: usize, reason: String| ProfileError::Parse { line, reason };
    let mut positions = 1usize;
    let mut names: HashMap<String, String> = HashMap::new();
    let mut current: Option<String> = None;
    let mut after_calls = false;
    let mut costs: BTreeMap<String, u64> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(spec) = line.strip_prefix("positions:") {
            positions = spec.split_whitespace().count().max(1);
        } else if let Some(spec) = line.strip_prefix("fn=") {
            current = Some(name(spec, &mut names));
        } else if let Some(spec) = line.strip_prefix("cfn=") {
            // Defines a compressed name like fn= does; the cost belongs to the caller.
            name(spec, &mut names);
        } else if line.starts_with("calls=") {
            after_calls = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '*')) {
            if std::mem::take(&mut after_calls) {
                continue; // the call's inclusive cost, not the caller's own
            }
            let mut fields = line.split_whitespace().skip(positions);
            let Some(first) = fields.next() else { continue };
            let cost: u64 = first
                .parse()
                .map_err(|_| bad(i + 1, format!("cost {first:?} is not a count")))?;
            let Some(function) = &current else {
                return Err(bad(i + 1, "a cost before any fn= line".into()));
            };
            *costs.entry(function.clone()).or_default() += cost;
        }
    }
    let root = frame(root);
    let folded: String = costs
        .into_iter()
        .filter(|(_, cost)| *cost > 0)
        .map(|(function, cost)| format!("{root};{} {cost}\n", frame(&function)))
        .collect();
    Folded::parse(&folded)
}

/// A name spec `(id) name`, `(id)` (a name defined before) or `name`.
fn name(spec: &str, names: &mut HashMap<String, String>) -> String {
    let spec = spec.trim();
    let Some(rest) = spec.strip_prefix('(') else {
        return spec.to_owned();
    };
    let Some((id, after)) = rest.split_once(')') else {
        return spec.to_owned();
    };
    let after = after.trim();
    if after.is_empty() {
        names.get(id).cloned().unwrap_or_else(|| format!("({id})"))
    } else {
        names.insert(id.to_owned(), after.to_owned());
        after.to_owned()
    }
}

/// A frame as folded stacks can hold it: no `;` (the separator) and no line break.
fn frame(name: &str) -> String {
    name.replace(';', ":").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_names_calls_and_relative_positions() {
        let text = "positions: line\nevents: Ir\nfn=(1) main\n10 5\n+1 3\ncfn=(2) work\n\
                    calls=1 20\n*  100\nfn=(2)\n20 100\nfn=(3) a;b\n-2 7\n";
        let folded = collapse_callgrind(text, "bench").unwrap();
        assert_eq!(
            folded.to_text(),
            "bench;a:b 7\nbench;main 8\nbench;work 100\n"
        );
    }

    #[test]
    fn instr_and_line_positions_skip_two_columns() {
        let text = "positions: instr line\nevents: Ir Dr\nfn=f\n0x10 3 4 9\n";
        let folded = collapse_callgrind(text, "b").unwrap();
        assert_eq!(folded.total(), 4);
    }

    #[test]
    fn a_cost_outside_a_function_is_an_error_naming_its_line() {
        let err = collapse_callgrind("events: Ir\n3 4\n", "b").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
