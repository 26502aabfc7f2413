//! Recall and precision of [`read`] on every real body (tests/bodies/), against what a careful
//! reader extracts: the rows of `body_tests::EXPECTED` and, for the bodies added with issue 57,
//! [`CAREFUL_READER`], written by hand from each text before the reader was run on it.
//!
//! A claim found is right when its benchmark, metric and sign are the reader's and both ends of
//! its change are within ±2 points; a wrong sign is a claim on an expected benchmark and metric
//! with the opposite sign. `cargo test -p benchgate-claims figures -- --nocapture` prints them.

use std::sync::LazyLock;

use regex::Regex;

use crate::body_tests::{EXPECTED, body};
use crate::{Claim, Metric, read};

/// One claim a careful reader extracts: benchmark (`None` when the body names none), metric,
/// and the change in percent, `[low, high]`.
type Careful = (Option<&'static str>, Metric, [f64; 2]);

use Metric::{Allocations, Memory, Throughput, Time};

/// The bodies added with issue 57, read by hand. Notes say why where a reading is debatable.
pub(crate) const CAREFUL_READER: &[(&str, &[Careful])] = &[
    (
        "py_REAM-lab_switch_64.md",
        &[(None, Memory, [-15.0, -15.0])],
    ),
    // "drops from 28.6 MB (main) to 25.1 MB with this PR".
    (
        "go_XTLS_Xray-core_5482.md",
        &[(None, Memory, [-12.2, -12.2])],
    ),
    (
        "go_vitessio_arewefastyet_626.md",
        &[(None, Time, [-50.0, -50.0])],
    ),
    ("py_glotaran_pyglotaran_785.md", &[]),
    ("go_missinglink_pbf_28.md", &[]),
    // "4.51% runtime decrease" (and, in Spanish, "un speedup de ~4.5%": the same claim).
    (
        "cpp_SebastianMestre_Jasper_28.md",
        &[(None, Time, [-4.5, -4.5])],
    ),
    // "reduces allocations per second by about two thirds".
    (
        "rust_xiph_rav1e_1911.md",
        &[(None, Allocations, [-66.7, -66.7])],
    ),
    // Allocated bytes (16 GB -> 4 GB): memory, not a count of allocations.
    (
        "java_datastax_jvector_270.md",
        &[(None, Memory, [-75.0, -75.0])],
    ),
    // Compared with the author's previous pull request, not with the base.
    ("cpp_cupslab_guess-calculator-framework_5.md", &[]),
    (
        "rust_lockbook_lockbook_4509.md",
        &[(None, Time, [-50.0, -50.0])],
    ),
    // "shaves the time from 1.9s to 1s"; "on par with optimized cpp" compares, claims nothing.
    (
        "rust_benhoyt_countwords_70.md",
        &[(None, Time, [-47.4, -47.4])],
    ),
    (
        "py_gem_oq-engine_7720.md",
        &[(None, Time, [-25.2, -25.2]), (None, Time, [-3.5, -3.5])],
    ),
    // The PR links jemalloc: glibc is the base, jemalloc the head.
    (
        "cpp_amkram_panmap_112.md",
        &[
            (Some("SARS index"), Time, [-8.0, -8.0]),
            (Some("SARS place"), Time, [-14.0, -14.0]),
            (Some("TB place"), Time, [-8.0, -8.0]),
        ],
    ),
    // "5-6% of scan_metadata time spent in allocation" is a profile's share, not a change.
    (
        "rust_delta-io_delta-kernel-rs_2193.md",
        &[(None, Time, [-15.0, -10.0])],
    ),
    ("rust_fbecart_zinoma_30.md", &[]),
    ("rust_ordinals_ord_2712.md", &[]),
    (
        "scala_typelevel_grackle_169.md",
        &[(None, Time, [-99.9, -99.9])],
    ),
    // A script comparing parsers (other libraries); nothing of this PR's.
    ("c_ruby_prism_2359.md", &[]),
    // JMH after, then "for reference, master is still this": ops/s of the PR against master.
    // "even faster than #41, #42, and #43" compares with other PRs.
    (
        "scala_stripe_rainier_47.md",
        &[
            (
                Some("Benchmarks.runFullNormalAsm"),
                Throughput,
                [77.4, 77.4],
            ),
            (
                Some("Benchmarks.runNormalAsm"),
                Throughput,
                [1974.4, 1974.4],
            ),
            (Some("Benchmarks.runPoissonAsm"), Throughput, [9.6, 9.6]),
        ],
    ),
    // "responsible for some 10% of cpu time": a profile's share, not a claimed change.
    ("nim_status-im_nimbus-eth1_2472.md", &[]),
    ("julia_JuliaReach_Reachability.jl_107.md", &[]),
    (
        "go_syncthing_syncthing_1862.md",
        &[
            (Some("Benchmark10kReplace"), Allocations, [-5.33, -5.33]),
            (Some("Benchmark10kUpdateChg"), Allocations, [-1.13, -1.13]),
            (Some("Benchmark10kUpdateSme"), Allocations, [-4.19, -4.19]),
            (Some("Benchmark10kNeed2k"), Allocations, [-1.90, -1.90]),
            (Some("Benchmark10kGlobal"), Allocations, [-4.21, -4.21]),
            (Some("Benchmark10kReplace"), Memory, [-12.19, -12.19]),
            (Some("Benchmark10kUpdateChg"), Memory, [-1.23, -1.23]),
            (Some("Benchmark10kUpdateSme"), Memory, [-7.03, -7.03]),
            (Some("Benchmark10kNeed2k"), Memory, [-3.40, -3.40]),
            (Some("Benchmark10kGlobal"), Memory, [-5.20, -5.20]),
        ],
    ),
    (
        "go_wasmCloud_wasmCloud_1598.md",
        &[(None, Throughput, [25.0, 28.0])],
    ),
    (
        "java_OpenLiberty_open-liberty_12744.md",
        &[(None, Throughput, [1.0, 2.0])],
    ),
    (
        "go_perlin-network_noise_218.md",
        &[(None, Throughput, [15.0, 20.0])],
    ),
    // The benchcmp compares two earlier commits (c69b1373, edfc86ac); this PR adds benchmarks.
    ("rust_stepancheg_rust-protobuf_193.md", &[]),
    // "faster than the previous one": the previous implementation is the one it replaces.
    (
        "cpp_ImageEngine_cortex_343.md",
        &[(None, Time, [-50.0, -50.0])],
    ),
    // benchstat sections pasted one after another without a blank line, as the output of
    // the flag this PR adds ("They can be compared with benchstat later"): an example of
    // what `-benchmem` shows, not a change this PR makes to anything measured.
    ("go_VKCOM_ktest_23.md", &[]),
    // benchstat, then the same three changes restated as sentences (time, memory, count of
    // allocations); "dropped by more than 50%" is read as -50%.
    (
        "go_kube-rbac-proxy_kube-rbac-proxy_350.md",
        &[
            (Some("TemplateWithValue-12"), Time, [-15.19, -15.19]),
            (Some("TemplateWithValue-12"), Memory, [-58.33, -58.33]),
            (Some("TemplateWithValue-12"), Allocations, [-33.33, -33.33]),
            (None, Time, [-15.0, -15.0]),
            (None, Memory, [-50.0, -50.0]),
            (None, Allocations, [-33.3, -33.3]),
        ],
    ),
    // "memory allocation" is allocated bytes (the JMH gc.alloc.rate.norm it measured).
    (
        "java_fusion-jena_JaroWinklerSimilarity_6.md",
        &[
            (None, Memory, [-80.0, -80.0]),
            (None, Throughput, [20.0, 20.0]),
        ],
    ),
    // "3.5x faster than it used to be"; "competitive with some of the faster
    // implementations" compares with other libraries and gives no size.
    (
        "odin_odin-lang_Odin_1046.md",
        &[(Some("zlib.inflate"), Time, [-71.4, -71.4])],
    ),
    // "about 3x away from 7zip": the project against another program, not a change.
    ("odin_odin-lang_Odin_1035.md", &[]),
    // "The new library is ~4x faster than stdlib": two libraries compared (jsoniter and
    // encoding/json), from the library's own figures; the PR measured nothing of its own.
    ("go_artie-labs_transfer_1377.md", &[]),
    // The new at() against the old table kept as atLegacy(): the PR's change, -23.1% time.
    // A known miss: the reader lists it as a comparison of two calls and claims nothing.
    (
        "cpp_scummvm_scummvm_1304.md",
        &[(Some("at()"), Time, [-23.1, -23.1])],
    ),
];

/// `name Metric +x%` or `name Metric -a..-b%` at the start of a `body_tests::EXPECTED` row.
static EXPECTED_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.*) (Time|Throughput|Allocations|Memory) ([+-][\d.]+)(?:\.\.([+-][\d.]+))?% ")
        .expect("a valid pattern")
});

fn metric_named(name: &str) -> Metric {
    match name {
        "Throughput" => Throughput,
        "Allocations" => Allocations,
        "Memory" => Memory,
        _ => Time,
    }
}

/// A claim a careful reader extracts, owned.
type Expected = (Option<String>, Metric, [f64; 2]);

/// Every body with what a careful reader extracts from it.
fn careful_reader() -> Vec<(&'static str, Vec<Expected>)> {
    let old = EXPECTED.iter().map(|(file, rows)| {
        let claims = rows
            .iter()
            .map(|row| {
                let c = EXPECTED_ROW.captures(row).expect("an EXPECTED row");
                let lo: f64 = c[3].parse().expect("a number");
                let hi = c
                    .get(4)
                    .map_or(lo, |h| h.as_str().parse().expect("a number"));
                let name = (&c[1] != "-").then(|| c[1].to_owned());
                (name, metric_named(&c[2]), [lo, hi])
            })
            .collect();
        (*file, claims)
    });
    let new = CAREFUL_READER.iter().map(|(file, rows)| {
        let claims = rows
            .iter()
            .map(|(name, metric, pct)| (name.map(str::to_owned), *metric, *pct))
            .collect();
        (*file, claims)
    });
    old.chain(new).collect()
}

fn same_name(found: Option<&str>, expected: Option<&str>) -> bool {
    match (found, expected) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        (None, None) => true,
        _ => false,
    }
}

fn sign(pct: [f64; 2]) -> f64 {
    (pct[0] + pct[1]).signum()
}

/// The figures of one run of the reader over every body.
#[derive(Debug, Default)]
pub(crate) struct Figures {
    pub expected: usize,
    pub expected_found: usize,
    pub found: usize,
    pub found_right: usize,
    pub wrong_sign: usize,
    pub on_bodies_without_claims: usize,
    pub bodies: usize,
    pub bodies_without_claims: usize,
}

/// The figures over the bodies `which` keeps (by file name).
pub(crate) fn figures(verbose: bool, which: impl Fn(&str) -> bool) -> Figures {
    let mut f = Figures::default();
    for (file, expected) in careful_reader().into_iter().filter(|(f, _)| which(f)) {
        let found: Vec<Claim> = read(&body(file));
        f.bodies += 1;
        if expected.is_empty() {
            f.bodies_without_claims += 1;
            f.on_bodies_without_claims += found.len();
        }
        let right = |c: &Claim, e: &Expected| {
            same_name(c.benchmark.as_deref(), e.0.as_deref())
                && c.metric == e.1
                && sign(c.change_pct) == sign(e.2)
                && (c.change_pct[0] - e.2[0]).abs() <= 2.0
                && (c.change_pct[1] - e.2[1]).abs() <= 2.0
        };
        f.expected += expected.len();
        f.found += found.len();
        for e in &expected {
            if found.iter().any(|c| right(c, e)) {
                f.expected_found += 1;
            } else if verbose {
                println!("  missed  {file}: {:?} {:?} {:?}", e.0, e.1, e.2);
            }
        }
        for c in &found {
            if expected.iter().any(|e| right(c, e)) {
                f.found_right += 1;
                continue;
            }
            let opposite = expected.iter().any(|e| {
                same_name(c.benchmark.as_deref(), e.0.as_deref())
                    && c.metric == e.1
                    && sign(c.change_pct) == -sign(e.2)
            });
            if opposite {
                f.wrong_sign += 1;
            }
            if verbose {
                let what = if opposite { "WRONG SIGN" } else { "wrong" };
                println!(
                    "  {what}  {file}: {:?} {:?} {:?}  | {}",
                    c.benchmark, c.metric, c.change_pct, c.quote
                );
            }
        }
    }
    f
}

impl std::fmt::Display for Figures {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let recall = self.expected_found as f64 / self.expected as f64;
        let precision = self.found_right as f64 / self.found as f64;
        write!(
            out,
            "{} bodies ({} claim nothing): recall {}/{} = {recall:.2}, precision {}/{} = \
             {precision:.2}, wrong signs {}, claims on bodies that make none {}",
            self.bodies,
            self.bodies_without_claims,
            self.expected_found,
            self.expected,
            self.found_right,
            self.found,
            self.wrong_sign,
            self.on_bodies_without_claims
        )
    }
}

/// The figures docs/configuration.md quotes ("The PR's own claims").
#[test]
fn figures_on_real_bodies() {
    let all = figures(true, |_| true);
    let new = figures(false, |f| CAREFUL_READER.iter().any(|(n, _)| *n == f));
    println!("all real bodies: {all}");
    println!("bodies added with issue 57: {new}");
    assert_eq!(CAREFUL_READER.len(), 34, "the bodies added with issue 57");
    assert!(
        all.expected_found * 10 >= all.expected * 9,
        "recall below 0.9: {all}"
    );
    assert!(
        all.found_right * 10 >= all.found * 9,
        "precision below 0.9: {all}"
    );
    assert_eq!(
        (all.wrong_sign, all.on_bodies_without_claims),
        (0, 0),
        "{all}"
    );
}

/// Bodies whose comparisons are listed as not read, with what they compare.
#[test]
fn comparisons_in_real_bodies_are_listed() {
    for (file, words) in [
        (
            "cpp_cupslab_guess-calculator-framework_5.md",
            "compares this change with my previous pull request",
        ),
        (
            "rust_stepancheg_rust-protobuf_193.md",
            "compares c69b1373 with edfc86ac",
        ),
    ] {
        let reading = crate::read_all(&body(file));
        let listed: Vec<String> = reading.not_read.iter().map(|n| n.words()).collect();
        assert_eq!(listed, [words], "{file}");
        assert!(reading.claims.is_empty(), "{file}");
    }
}
