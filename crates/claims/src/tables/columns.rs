//! A table of two columns compared, each row's change in the later one's cell:
//! `| stage | glibc | jemalloc |` / `| SARS index | 4.26 s | 3.93 s (**−8%**) |`. It is the PR's
//! claim only when the body says the PR adopts the later column ("Link `jemalloc`", "switch
//! to mimalloc") or the names say base and head; otherwise it compares two other things and is
//! listed as not read.

use std::sync::LazyLock;

use regex::Regex;

use super::{NotRead, Reader, Side, cells, number, plain, re, side_of, unit_in};
use crate::{Metric, Source};

/// The change in a cell: "3.93 s (**−8%**)".
static CELL_CHANGE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\(\s*\**\s*([+\-−]?\d+(?:\.\d+)?)\s*%\s*\**\s*\)"));

impl Reader<'_> {
    /// The table whose header is line `i`, when its last column's cells hold their change.
    pub(super) fn two_columns(&mut self, i: usize, header: &[&str]) -> Option<usize> {
        let last = header.len() - 1;
        if last < 2 {
            return None;
        }
        let (base, head) = (plain(header[last - 1]), plain(header[last]));
        let mut rows = Vec::new();
        let mut j = i + 2;
        while let Some(row) = self.lines.get(j).and_then(|l| cells(l)) {
            let change = row
                .get(last)
                .and_then(|c| CELL_CHANGE.captures(c))
                .and_then(|c| number(&c[1]));
            if let Some(pct) = change {
                let metric = row.iter().find_map(|c| unit_in(c)).unwrap_or(Metric::Time);
                rows.push((j, plain(row[0]), metric, pct));
            }
            j += 1;
        }
        if rows.is_empty() {
            return None;
        }
        let adopted = side_of(&head) == Some(Side::Head)
            || side_of(&base) == Some(Side::Base)
            || self.adopts(&head);
        if !adopted {
            self.not_read.push(NotRead {
                line: i + 1,
                quote: self.lines[i].trim().to_owned(),
                compares: [base, head],
            });
            return Some(j);
        }
        for (j, name, metric, pct) in rows {
            self.push(j, Some(name), metric, [pct, pct], None, Source::Table);
        }
        Some(j)
    }

    /// Whether the body says the PR takes `what` up: "Link `jemalloc`", "switch to X".
    fn adopts(&self, what: &str) -> bool {
        let what = regex::escape(&what.to_lowercase());
        let Ok(says) = Regex::new(&format!(
            r"(?i)\b(?:link\w*|us(?:e|es|ing)|switch\w*\s+(?:\w+\s+){{0,4}}?to|adopt\w*|enabl\w*|mov\w*\s+to|replac\w*\s+\S+\s+with)\s+(?:the\s+)?`?{what}\b"
        )) else {
            return false;
        };
        self.lines.iter().any(|l| says.is_match(l))
    }
}
