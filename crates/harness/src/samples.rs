//! Base/head samples of every benchmark and metric, paired: by round when the harness ran them,
//! by order when they come from two files.

use std::collections::HashMap;

use benchgate_api::{Direction, Measurement, Side};
use serde::{Deserialize, Serialize};

/// One benchmark and metric.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeriesKey {
    pub benchmark: String,
    pub metric: String,
}

impl SeriesKey {
    fn of(m: &Measurement) -> Self {
        SeriesKey {
            benchmark: m.benchmark.clone(),
            metric: m.metric.clone(),
        }
    }
}

/// The pairs of one benchmark and metric, in order; `base[i]` and `head[i]` are one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub key: SeriesKey,
    pub unit: String,
    /// Which way is better, as the parser said for the first value.
    #[serde(default)]
    pub direction: Direction,
    pub base: Vec<f64>,
    pub head: Vec<f64>,
    /// Per pair, whether base ran first; empty when the order is unknown (files).
    pub base_first: Vec<bool>,
}

/// A benchmark and metric whose two sides have different numbers of samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountMismatch {
    pub key: SeriesKey,
    pub base: usize,
    pub head: usize,
}

/// A benchmark and metric that only one side reported (added, removed or renamed in head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneSided {
    pub key: SeriesKey,
    pub unit: String,
    pub direction: Direction,
    pub side: Side,
}

/// Every series of a comparison, in the order benchmarks first appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairedSamples {
    series: Vec<Series>,
    index: HashMap<SeriesKey, usize>,
    one_sided: Vec<OneSided>,
}

/// One group of values: key, unit, direction, values.
type Group = (SeriesKey, String, Direction, Vec<f64>);

impl PairedSamples {
    /// Adds one round. A run that reports a metric several times counts once, with the mean of
    /// its values, because the unit of analysis is a pair of whole runs. A metric reported by
    /// only one side this round yields no pair.
    pub fn push_round(&mut self, base: &[Measurement], head: &[Measurement], base_first: bool) {
        let (base_means, head_means) = (run_means(base), run_means(head));
        for (key, unit, direction, b) in &base_means {
            match head_means.iter().find(|(k, ..)| k == key) {
                Some((_, _, _, h)) => {
                    let series = self.series_mut(key.clone(), unit, *direction);
                    series.base.push(*b);
                    series.head.push(*h);
                    series.base_first.push(base_first);
                }
                None => self.note_one_sided(key, unit, *direction, Side::Base),
            }
        }
        for (key, unit, direction, _) in &head_means {
            if !base_means.iter().any(|(k, ..)| k == key) {
                self.note_one_sided(key, unit, *direction, Side::Head);
            }
        }
        let index = &self.index;
        self.one_sided.retain(|o| !index.contains_key(&o.key));
    }

    /// Remembers a series only `side` reported, unless it is paired already.
    fn note_one_sided(&mut self, key: &SeriesKey, unit: &str, direction: Direction, side: Side) {
        if !self.index.contains_key(key) && !self.one_sided.iter().any(|o| o.key == *key) {
            self.one_sided.push(OneSided {
                key: key.clone(),
                unit: unit.to_owned(),
                direction,
                side,
            });
        }
    }

    /// The series that only one side reported, in first-seen order.
    pub fn one_sided(&self) -> &[OneSided] {
        &self.one_sided
    }

    /// Pairs two sample lists by order within each benchmark and metric; where the counts
    /// differ, the common prefix is paired and the mismatch returned for a warning.
    pub fn pair_by_order(base: &[Measurement], head: &[Measurement]) -> (Self, Vec<CountMismatch>) {
        let (base_groups, head_groups) = (group(base), group(head));
        let mut paired = PairedSamples::default();
        let mut mismatches = Vec::new();
        for (key, unit, direction, b) in &base_groups {
            let h = head_groups
                .iter()
                .find(|(k, ..)| k == key)
                .map_or(&[][..], |(_, _, _, h)| h.as_slice());
            if b.len() != h.len() {
                mismatches.push(CountMismatch {
                    key: key.clone(),
                    base: b.len(),
                    head: h.len(),
                });
            }
            let n = b.len().min(h.len());
            if n > 0 {
                let series = paired.series_mut(key.clone(), unit, *direction);
                series.base.extend_from_slice(&b[..n]);
                series.head.extend_from_slice(&h[..n]);
            } else {
                paired.note_one_sided(key, unit, *direction, Side::Base);
            }
        }
        for (key, unit, direction, h) in &head_groups {
            if !base_groups.iter().any(|(k, ..)| k == key) {
                mismatches.push(CountMismatch {
                    key: key.clone(),
                    base: 0,
                    head: h.len(),
                });
                paired.note_one_sided(key, unit, *direction, Side::Head);
            }
        }
        (paired, mismatches)
    }

    /// The series in first-seen order.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The most pairs any series has.
    pub fn max_pairs(&self) -> usize {
        self.series.iter().map(|s| s.base.len()).max().unwrap_or(0)
    }

    fn series_mut(&mut self, key: SeriesKey, unit: &str, direction: Direction) -> &mut Series {
        let i = *self.index.entry(key.clone()).or_insert_with(|| {
            self.series.push(Series {
                key,
                unit: unit.to_owned(),
                direction,
                base: Vec::new(),
                head: Vec::new(),
                base_first: Vec::new(),
            });
            self.series.len() - 1
        });
        &mut self.series[i]
    }
}

/// Values grouped by benchmark and metric, in first-seen order.
fn group(ms: &[Measurement]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut at: HashMap<SeriesKey, usize> = HashMap::new();
    for m in ms {
        let key = SeriesKey::of(m);
        match at.get(&key) {
            Some(&i) => groups[i].3.push(m.value),
            None => {
                at.insert(key.clone(), groups.len());
                groups.push((key, m.unit.clone(), m.direction, vec![m.value]));
            }
        }
    }
    groups
}

fn run_means(ms: &[Measurement]) -> Vec<(SeriesKey, String, Direction, f64)> {
    group(ms)
        .into_iter()
        .map(|(k, u, d, v)| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (k, u, d, mean)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(benchmark: &str, value: f64) -> Measurement {
        Measurement {
            benchmark: benchmark.into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
        }
    }

    #[test]
    fn rounds_pair_run_means_and_skip_one_sided_metrics() {
        let mut s = PairedSamples::default();
        s.push_round(
            &[m("a", 1.0), m("a", 3.0), m("b", 5.0)],
            &[m("a", 4.0)],
            true,
        );
        assert_eq!(s.series().len(), 1);
        assert_eq!(
            (s.series()[0].base.clone(), s.series()[0].head.clone()),
            (vec![2.0], vec![4.0])
        );
        let sides: Vec<_> = s
            .one_sided()
            .iter()
            .map(|o| (o.key.benchmark.as_str(), o.side))
            .collect();
        assert_eq!(sides, [("b", Side::Base)]);
        // Once paired in a later round, it is no longer one-sided.
        s.push_round(&[m("b", 5.0)], &[m("b", 6.0)], false);
        assert!(s.one_sided().is_empty());
    }

    #[test]
    fn order_pairing_keeps_the_common_prefix_and_reports_mismatches() {
        let base = [m("a", 1.0), m("a", 2.0), m("a", 3.0), m("only_base", 1.0)];
        let head = [m("a", 1.5), m("a", 2.5), m("only_head", 1.0)];
        let (s, mismatches) = PairedSamples::pair_by_order(&base, &head);
        assert_eq!(s.series()[0].base, vec![1.0, 2.0]);
        assert_eq!(s.series()[0].head, vec![1.5, 2.5]);
        let counts: Vec<_> = mismatches
            .iter()
            .map(|c| (c.key.benchmark.as_str(), c.base, c.head))
            .collect();
        assert_eq!(
            counts,
            vec![("a", 3, 2), ("only_base", 1, 0), ("only_head", 0, 1)]
        );
        let sides: Vec<_> = s
            .one_sided()
            .iter()
            .map(|o| (o.key.benchmark.as_str(), o.side))
            .collect();
        assert_eq!(
            sides,
            [("only_base", Side::Base), ("only_head", Side::Head)]
        );
    }
}
