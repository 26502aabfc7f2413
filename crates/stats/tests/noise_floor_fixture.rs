//! A noise floor from real A/A data: pyperf's `telco` benchmark, 40 processes of identical code
//! (see tests/fixtures/README.md for origin and licence).

use benchgate_stats::{AnalysisOptions, NoiseFloor, Verdict, analyze_pairs, plan_n_star};

/// Per-process means of the telco runs, in run order (the first run holds only warm-ups).
fn worker_means() -> Vec<f64> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pyperf-telco-aa.json"
    ))
    .expect("fixture present");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    json["benchmarks"][0]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|run| run["values"].as_array())
        .map(|values| {
            let v: Vec<f64> = values.iter().map(|x| x.as_f64().unwrap()).collect();
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect()
}

/// Worker 2k plays base and worker 2k+1 plays head: 20 A/A pairs of whole processes.
fn aa_pairs() -> (Vec<f64>, Vec<f64>) {
    let means = worker_means();
    assert_eq!(means.len(), 40);
    means.chunks(2).map(|p| (p[0], p[1])).unzip()
}

#[test]
fn floor_from_real_aa_sessions_is_plausible() {
    let (base, head) = aa_pairs();
    let sessions: Vec<(&[f64], &[f64])> = base.chunks(5).zip(head.chunks(5)).collect();
    let floor = NoiseFloor::from_session_samples(&sessions).unwrap();
    assert_eq!((floor.sessions, floor.pairs), (4, 20));
    // An isolated, pinned laptop core: about 1% between two processes of identical code.
    assert!(
        floor.s_aa > 0.002 && floor.s_aa < 0.03,
        "s_aa = {}",
        floor.s_aa
    );
    // Four sessions minutes apart on one machine: no bias beyond the within-session noise.
    assert!(floor.tau_b < floor.s_aa, "tau_b = {}", floor.tau_b);
    assert!(!floor.is_deterministic());
    let margin = floor.margin(0.01_f64.ln_1p());
    assert!(margin >= 0.01_f64.ln_1p() && margin < 0.05);

    // Planning: resolving ±1% at this spread takes a plausible number of rounds.
    let n_star = plan_n_star(0.05, floor.s_aa, 0.01, 1000).unwrap().unwrap();
    assert!((5..=200).contains(&n_star), "n* = {n_star}");
}

#[test]
fn aa_data_does_not_claim_a_change() {
    let (base, head) = aa_pairs();
    let a = analyze_pairs(&base, &head, &AnalysisOptions::default(), None).unwrap();
    assert!(a.interval.contains(0.0), "{:?}", a.interval);
    assert!(a.anytime_p_value > 0.05);
    assert!(!matches!(
        a.verdict,
        Verdict::Slower { .. } | Verdict::Faster { .. }
    ));
    assert!(a.change_pct.abs() < 1.0);
}
