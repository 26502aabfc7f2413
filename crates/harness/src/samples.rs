//! Base/head samples of every benchmark and metric, paired: by round when the harness ran them,
//! by order when they come from two files.

use std::collections::HashMap;

use benchgate_api::Measurement;
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

/// Every series of a comparison, in the order benchmarks first appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairedSamples {
    series: Vec<Series>,
    index: HashMap<SeriesKey, usize>,
}

impl PairedSamples {
    /// Adds one round. A run that reports a metric several times counts once, with the mean of
    /// its values, because the unit of analysis is a pair of whole runs. A metric reported by
    /// only one side this round yields no pair.
    pub fn push_round(&mut self, base: &[Measurement], head: &[Measurement], base_first: bool) {
        let head_means = run_means(head);
        for (key, unit, b) in run_means(base) {
            if let Some((_, _, h)) = head_means.iter().find(|(k, _, _)| *k == key) {
                let series = self.series_mut(key, &unit);
                series.base.push(b);
                series.head.push(*h);
                series.base_first.push(base_first);
            }
        }
    }

    /// Pairs two sample lists by order within each benchmark and metric; where the counts
    /// differ, the common prefix is paired and the mismatch returned for a warning.
    pub fn pair_by_order(base: &[Measurement], head: &[Measurement]) -> (Self, Vec<CountMismatch>) {
        let (base_groups, head_groups) = (group(base), group(head));
        let mut paired = PairedSamples::default();
        let mut mismatches = Vec::new();
        for (key, unit, b) in &base_groups {
            let h = head_groups
                .iter()
                .find(|(k, _, _)| k == key)
                .map_or(&[][..], |(_, _, h)| h.as_slice());
            if b.len() != h.len() {
                mismatches.push(CountMismatch {
                    key: key.clone(),
                    base: b.len(),
                    head: h.len(),
                });
            }
            let n = b.len().min(h.len());
            if n > 0 {
                let series = paired.series_mut(key.clone(), unit);
                series.base.extend_from_slice(&b[..n]);
                series.head.extend_from_slice(&h[..n]);
            }
        }
        for (key, _, h) in &head_groups {
            if !base_groups.iter().any(|(k, _, _)| k == key) {
                mismatches.push(CountMismatch {
                    key: key.clone(),
                    base: 0,
                    head: h.len(),
                });
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

    fn series_mut(&mut self, key: SeriesKey, unit: &str) -> &mut Series {
        let i = *self.index.entry(key.clone()).or_insert_with(|| {
            self.series.push(Series {
                key,
                unit: unit.to_owned(),
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
fn group(ms: &[Measurement]) -> Vec<(SeriesKey, String, Vec<f64>)> {
    let mut groups: Vec<(SeriesKey, String, Vec<f64>)> = Vec::new();
    for m in ms {
        let key = SeriesKey::of(m);
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, values)) => values.push(m.value),
            None => groups.push((key, m.unit.clone(), vec![m.value])),
        }
    }
    groups
}

fn run_means(ms: &[Measurement]) -> Vec<(SeriesKey, String, f64)> {
    group(ms)
        .into_iter()
        .map(|(k, u, v)| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (k, u, mean)
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
    }
}
