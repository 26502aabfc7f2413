//! The forms issue 57 added, one line each, reworded from real descriptions (the real bodies
//! are in tests/bodies/ and `body_figures`); the edge cases here are made up.

use crate::{Metric, Source, read, read_all};

/// Each claim as (benchmark, metric, change rounded to 0.1).
fn claims(body: &str) -> Vec<(Option<String>, Metric, [f64; 2])> {
    read(body)
        .into_iter()
        .map(|c| {
            let r = |x: f64| (x * 10.0).round() / 10.0;
            (
                c.benchmark,
                c.metric,
                [r(c.change_pct[0]), r(c.change_pct[1])],
            )
        })
        .collect()
}

fn one(metric: Metric, pct: f64) -> Vec<(Option<String>, Metric, [f64; 2])> {
    vec![(None, metric, [pct, pct])]
}

#[test]
fn multiplicative_and_additive_sentences() {
    use Metric::*;
    assert_eq!(
        claims("The scan is up to 6 times faster."),
        one(Time, -83.3)
    );
    assert_eq!(claims("a 3-fold speedup of the solver"), one(Time, -66.7));
    assert_eq!(
        claims("This gives a 7% performance increase."),
        one(Time, -7.0)
    );
    assert_eq!(claims("We see a 60%+ speed improvement."), one(Time, -60.0));
    assert_eq!(
        claims("Decoding is 3% ~ 12% faster."),
        vec![(None, Time, [-12.0, -3.0])]
    );
    assert_eq!(
        claims("Encoding gets 10 to 15% faster."),
        vec![(None, Time, [-15.0, -10.0])]
    );
    assert_eq!(
        claims("It halves the allocations in the loop."),
        one(Allocations, -50.0)
    );
    assert_eq!(
        claims("This brings memory usage down to ~ half."),
        one(Memory, -50.0)
    );
    assert_eq!(
        claims("It cuts peak memory by a third."),
        one(Memory, -33.3)
    );
}

#[test]
fn memory_allocation_and_throughput_sentences_keep_their_metric() {
    use Metric::*;
    assert_eq!(
        claims("This cuts memory usage by around 28%."),
        one(Memory, -28.0)
    );
    assert_eq!(
        claims("It should reduce allocated objects by ~40% and CPU time by 12%."),
        vec![
            (None, Allocations, [-40.0, -40.0]),
            (None, Time, [-12.0, -12.0])
        ]
    );
    assert_eq!(
        claims("a 30% increase in requests per second"),
        one(Throughput, 30.0)
    );
    assert_eq!(claims("RSS goes from 120 MB to 90 MB."), one(Memory, -25.0));
}

#[test]
fn struck_and_quoted_text_is_not_a_claim() {
    assert!(read("~~Parsing is 5-20% faster.~~ Measurements to follow.").is_empty());
    assert!(read("> this makes it 30% faster, right?\n\nNot measured yet.").is_empty());
}

/// Issue 57's wrong sign, reworded: the subject of "slower than" is what the PR removes.
#[test]
fn the_sign_follows_the_change_when_the_old_way_is_the_subject() {
    let body = "This removes the hash lookups from the hot loop.\n\n\
                Hash lookups are ~20% slower than a linear scan for these sizes.";
    assert_eq!(claims(body), one(Metric::Time, -16.7));
}

#[test]
fn comparisons_with_other_things_are_listed_not_claimed() {
    let r = read_all("Our `decode` is 30% faster than serde_json on twitter.json.");
    assert!(r.claims.is_empty(), "{:?}", r.claims);
    assert_eq!(r.not_read[0].words(), "compares `decode` with serde_json");
}

/// `cargo benchcmp`'s layout (with its speed-up column).
#[test]
fn cargo_benchcmp_rows() {
    let body = "\
 name         before.txt ns/iter  after.txt ns/iter  diff ns/iter   diff %  speedup
 parse_big    4,100,000           1,640,000            -2,460,000  -60.00%   x 2.50
 parse_small  1,200 (+/- 30)      1,236 (+/- 25)               36    3.00%   x 0.97
";
    let c = read(body);
    assert_eq!(c.len(), 2, "{c:#?}");
    assert_eq!(
        (c[0].benchmark.as_deref(), c[0].change_pct, c[0].source),
        (Some("parse_big"), [-60.0, -60.0], Source::Benchcmp)
    );
    assert_eq!(c[1].change_pct, [3.0, 3.0]);
}

/// benchstat sections pasted without a blank line: each keeps its own metric.
#[test]
fn benchstat_sections_without_blank_lines() {
    let body = "\
name          old time/op    new time/op    delta
Decode-8         924µs ± 2%     827µs ± 3%  -10.50%  (p=0.008 n=5+5)
name          old alloc/op   new alloc/op   delta
Decode-8         289kB ± 0%     226kB ± 0%  -22.00%  (p=0.008 n=5+5)
name          old allocs/op  new allocs/op  delta
Decode-8         3.33k ± 0%     1.34k ± 0%  -59.70%  (p=0.008 n=5+5)
";
    let got: Vec<(Metric, f64)> = read(body)
        .iter()
        .map(|c| (c.metric, c.change_pct[0]))
        .collect();
    assert_eq!(
        got,
        [
            (Metric::Time, -10.5),
            (Metric::Memory, -22.0),
            (Metric::Allocations, -59.7)
        ]
    );
}

/// critcmp's table as cuviper posted it on huonw/primal#30 (a comment, 2020-06-12:
/// https://github.com/huonw/primal/pull/30), HTML colour tags and all.
#[test]
fn critcmp_reads_each_side_by_its_baseline_name() {
    let body = r##"<pre>group                                 master                                 refactor
-----                                 ------                                 --------
is_prime/Sieve::is_prime              1.29     42.8±1.06µs        ? B/sec<font color="#859900"><b>    1.00     33.3±0.68µs        ? B/sec</b></font>
is_prime/Sieve::is_prime with init    1.08    174.3±1.62µs        ? B/sec<font color="#859900"><b>    1.00    160.9±0.22µs        ? B/sec</b></font>
is_prime/is_prime<font color="#859900"><b>                     1.00    640.3±0.82µs        ? B/sec</b></font>    1.00    643.0±4.22µs        ? B/sec
</pre>"##;
    let got: Vec<(String, f64)> = read(body)
        .iter()
        .map(|c| {
            let pct = (c.change_pct[0] * 10.0).round() / 10.0;
            (c.benchmark.clone().unwrap_or_default(), pct)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("is_prime/Sieve::is_prime".to_owned(), -22.2),
            ("is_prime/Sieve::is_prime with init".to_owned(), -7.7),
            ("is_prime/is_prime".to_owned(), 0.4)
        ]
    );
    let unnamed =
        read_all("group  fast  slow\n-----  ----  ----\nx  1.00  1.0±0.1µs  1.50  1.5±0.1µs\n");
    assert!(unnamed.claims.is_empty());
    assert_eq!(unnamed.not_read[0].words(), "compares fast with slow");
}

/// Reworded from real bodies (tests/bodies/): "more than N%" is a size, not a comparison;
/// "memory allocation" is allocated bytes; a second verb after "and" says its own way.
#[test]
fn qualified_sizes_and_two_verbs() {
    use Metric::*;
    assert_eq!(
        claims("- Heap usage dropped by more than 40%."),
        one(Memory, -40.0)
    );
    assert_eq!(
        claims("It cuts memory allocation by 70% and raises throughput by 10%."),
        vec![
            (None, Memory, [-70.0, -70.0]),
            (None, Throughput, [10.0, 10.0])
        ]
    );
}

#[test]
fn output_that_can_be_compared_later_is_an_example() {
    let body = "Results can be compared with benchstat later.\n\n\
                \tname    old time/op    new time/op    delta\n\
                \tDecode    63.2ns ± 2%    14.0ns ± 0%   -77.85%  (p=0.008 n=5+5)\n";
    assert!(read(body).is_empty());
}
