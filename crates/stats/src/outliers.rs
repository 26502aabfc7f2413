//! Outliers by the modified z-score `0.6745·(x − median)/MAD` (Iglewicz & Hoaglin 1993):
//! flagged and counted in the report, never removed, because the interval must use every pair.

use crate::paired::median;

/// Pairs whose modified z-score exceeds this are flagged (the usual 3.5).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// One flagged value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// Index of the pair (round order).
    pub index: usize,
    pub value: f64,
    pub modified_z: f64,
}

/// Values whose modified z-score exceeds [`MODIFIED_Z_THRESHOLD`].
///
/// When more than half the values are equal the MAD is 0; then the mean absolute deviation
/// (scaled by 1.2533 to match a normal sd's 0.7979 ratio) stands in, and with no spread at all
/// nothing is flagged.
pub fn modified_z_outliers(x: &[f64]) -> Vec<Outlier> {
    let Some(med) = median(x) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * deviations.iter().sum::<f64>() / x.len() as f64
    };
    if scale.is_nan() || scale <= 0.0 {
        return Vec::new();
    }
    x.iter()
        .enumerate()
        .filter_map(|(index, &value)| {
            let modified_z = (value - med) / scale;
            (modified_z.abs() > MODIFIED_Z_THRESHOLD).then_some(Outlier {
                index,
                value,
                modified_z,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_the_wild_pair_only() {
        let d = [0.01, 0.012, 0.009, 0.011, 0.2, 0.010, 0.008];
        let flagged = modified_z_outliers(&d);
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].index, 4);
        assert!(flagged[0].modified_z > 3.5);
    }

    #[test]
    fn constant_data_flags_nothing() {
        assert!(modified_z_outliers(&[1.0; 6]).is_empty());
        assert!(modified_z_outliers(&[]).is_empty());
    }

    #[test]
    fn zero_mad_falls_back_to_mean_deviation() {
        let flagged = modified_z_outliers(&[1.0, 1.0, 1.0, 1.0, 1.0, 5.0]);
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].index, 5);
    }
}
