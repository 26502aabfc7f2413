//! Which functions a slower head spends its time in: each function's share of samples on both
//! sides, and the change in percentage points, ranked by how much it moved.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::folded::Folded;

/// One function's change in share of samples between base and head, in percentage points.
///
/// Shares are percentages (0–100) of each side's own total, so a head that simply runs longer
/// moves nothing; `self_pp` is `head_self_share - base_self_share`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionChange {
    pub function: String,
    /// Change in the share of samples where the function is the leaf (running itself).
    pub self_pp: f64,
    /// Change in the share of samples whose stack contains the function (it or its callees).
    pub total_pp: f64,
    pub base_self_share: f64,
    pub head_self_share: f64,
}

/// All functions, ordered by |self_pp| descending then |total_pp| descending then name. self =
/// samples where the function is the leaf; total = samples whose stack contains it (counted once
/// per stack even under recursion). Shares are of each side's own total.
pub fn changes(base: &Folded, head: &Folded) -> Vec<FunctionChange> {
    let (base, head) = (Shares::of(base), Shares::of(head));
    let names: BTreeSet<&str> = base
        .total
        .keys()
        .chain(head.total.keys())
        .copied()
        .collect();
    let mut out: Vec<FunctionChange> = names
        .into_iter()
        .map(|name| {
            let (base_self, head_self) = (base.self_share(name), head.self_share(name));
            FunctionChange {
                function: name.to_owned(),
                self_pp: head_self - base_self,
                total_pp: head.total_share(name) - base.total_share(name),
                base_self_share: base_self,
                head_self_share: head_self,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.self_pp
            .abs()
            .total_cmp(&a.self_pp.abs())
            .then(b.total_pp.abs().total_cmp(&a.total_pp.abs()))
            .then_with(|| a.function.cmp(&b.function))
    });
    out
}

/// One side's samples per function, as leaf and anywhere in the stack.
struct Shares<'a> {
    leaf: BTreeMap<&'a str, u64>,
    total: BTreeMap<&'a str, u64>,
    samples: u64,
}

impl<'a> Shares<'a> {
    fn of(folded: &'a Folded) -> Self {
        let mut shares = Shares {
            leaf: BTreeMap::new(),
            total: BTreeMap::new(),
            samples: folded.total(),
        };
        let mut seen = BTreeSet::new();
        for (stack, count) in folded.stacks() {
            if let Some(leaf) = stack.rsplit(';').next() {
                *shares.leaf.entry(leaf).or_default() += count;
            }
            seen.clear();
            for frame in stack.split(';') {
                // Once per stack: a recursive function is not in 300% of its samples.
                if seen.insert(frame) {
                    *shares.total.entry(frame).or_default() += count;
                }
            }
        }
        shares
    }

    fn percent(&self, count: Option<&u64>) -> f64 {
        match self.samples {
            0 => 0.0,
            n => 100.0 * count.copied().unwrap_or(0) as f64 / n as f64,
        }
    }

    fn self_share(&self, name: &str) -> f64 {
        self.percent(self.leaf.get(name))
    }

    fn total_share(&self, name: &str) -> f64 {
        self.percent(self.total.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_leaf_ranks_first_and_recursion_counts_once() {
        let base = Folded::parse("p;main;work 80\np;main;f;f;f 20\n").unwrap();
        let head = Folded::parse("p;main;work 40\np;main;f;f;f 10\np;main;slow 50\n").unwrap();
        let c = changes(&base, &head);
        assert_eq!(c[0].function, "slow");
        assert!((c[0].self_pp - 50.0).abs() < 1e-9, "{c:?}");
        assert_eq!((c[0].base_self_share, c[0].head_self_share), (0.0, 50.0));
        assert_eq!(c[1].function, "work");
        assert!((c[1].self_pp + 40.0).abs() < 1e-9, "{c:?}");
        let f = c.iter().find(|x| x.function == "f").unwrap();
        assert!((f.total_pp + 10.0).abs() < 1e-9, "{f:?}");
        // p and main are in every stack on both sides: no change, ordered by name.
        let tail: Vec<&str> = c[c.len() - 2..]
            .iter()
            .map(|x| x.function.as_str())
            .collect();
        assert_eq!(tail, ["main", "p"]);
    }

    #[test]
    fn an_empty_side_has_zero_shares() {
        let head = Folded::parse("p;main 3\n").unwrap();
        let c = changes(&Folded::default(), &head);
        assert!(c.iter().all(|x| x.base_self_share == 0.0));
        assert!(changes(&Folded::default(), &Folded::default()).is_empty());
    }
}
