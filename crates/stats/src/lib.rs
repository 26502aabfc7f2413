//! benchgate-stats: numbers in, verdicts out. Paired log-ratios, the anytime-valid
//! Gaussian-mixture confidence sequence, A/A noise floors and verdicts. No I/O, no async.
