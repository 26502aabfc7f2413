//! Order statistics of the Walsh averages `(x_i + x_j)/2, i ≤ j` without forming all
//! `n(n+1)/2` of them: the selection of Johnson & Mizoguchi (1978) as Monahan (1984) gives it
//! for the Hodges–Lehmann estimator, in O(n log n) expected time and O(n) memory.
//!
//! With `x` sorted, row `i` of the averages (`j = i..n`) increases with `j` and column `j`
//! with `i`, so how many averages lie below a value is counted in one O(n) sweep. Each step
//! picks a pivot among the averages still in play, counts, and keeps the side that holds the
//! wanted rank; a random pivot halves the candidates on average.

/// The `k`-th smallest (0-based) Walsh average of `sorted` (ascending by `f64::total_cmp`,
/// no NaN).
///
/// # Panics
/// When `k` is not below `n(n+1)/2`.
pub fn walsh_order_statistic(sorted: &[f64], k: usize) -> f64 {
    let n = sorted.len();
    assert!(
        k < n * (n + 1) / 2,
        "rank {k} of {} averages",
        n * (n + 1) / 2
    );
    let average = |i: usize, j: usize| 0.5 * (sorted[i] + sorted[j]);
    // Candidates: in row i, columns lo[i]..hi[i]; every average left of lo[i] is below the
    // answer's rank and every one from hi[i] on above it.
    let mut lo: Vec<usize> = (0..n).collect();
    let mut hi: Vec<usize> = vec![n; n];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ (n as u64) ^ ((k as u64) << 32);
    loop {
        let left: usize = lo.iter().zip(&hi).map(|(l, h)| h - l).sum();
        if left <= n.max(16) {
            // Few enough to select among directly.
            let below: usize = (0..n).map(|i| lo[i] - i).sum();
            let mut rest: Vec<f64> = (0..n)
                .flat_map(|i| (lo[i]..hi[i]).map(move |j| (i, j)))
                .map(|(i, j)| average(i, j))
                .collect();
            return *rest.select_nth_unstable_by(k - below, f64::total_cmp).1;
        }
        let pivot = {
            let mut r = (splitmix(&mut state) % left as u64) as usize;
            let mut row = 0;
            while r >= hi[row] - lo[row] {
                r -= hi[row] - lo[row];
                row += 1;
            }
            average(row, lo[row] + r)
        };
        // Per row, the first column whose average is >= pivot (`below`) and > pivot (`above`).
        // `total_cmp`, as the sort this replaces uses: -0.0 ranks below 0.0.
        let below = first_columns(sorted, |w| w.total_cmp(&pivot).is_ge());
        let above = first_columns(sorted, |w| w.total_cmp(&pivot).is_gt());
        let count = |cols: &[usize]| cols.iter().enumerate().map(|(i, c)| c - i).sum::<usize>();
        if k < count(&below) {
            for (h, b) in hi.iter_mut().zip(&below) {
                *h = (*h).min(*b);
            }
        } else if k >= count(&above) {
            for (l, a) in lo.iter_mut().zip(&above) {
                *l = (*l).max(*a);
            }
        } else {
            return pivot;
        }
        // Rows whose candidates crossed are empty.
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
            *h = (*h).max(*l);
        }
    }
}

/// For each row `i`, the first column `j ≥ i` whose average meets `reached` (`n` when none
/// does). `reached` must be monotone in the average; the column only moves left as `i` grows.
fn first_columns(sorted: &[f64], reached: impl Fn(f64) -> bool) -> Vec<usize> {
    let n = sorted.len();
    let mut cols = Vec::with_capacity(n);
    let mut j = n;
    for i in 0..n {
        while j > i && reached(0.5 * (sorted[i] + sorted[j - 1])) {
            j -= 1;
        }
        cols.push(j.max(i));
    }
    cols
}

/// SplitMix64: a deterministic pivot choice, so an analysis is reproducible.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_is_its_own_average() {
        assert_eq!(walsh_order_statistic(&[0.25], 0), 0.25);
    }
}
