//! Capping to [`Limits`]: the depth cut, the catch-all line, and (as properties) that the text
//! fits and no sample is lost.

use benchgate_profile::{DEEPER_FRAMES, Folded, Limits, OTHER_STACKS};
use proptest::prelude::*;

#[test]
fn a_ten_thousand_frame_recursion_is_cut_to_max_depth() {
    let stack = std::iter::once("prog")
        .chain(std::iter::repeat_n("recurse", 9_999))
        .collect::<Vec<_>>()
        .join(";");
    let folded = Folded::parse(&format!("{stack} 7\nprog;main 3\n")).unwrap();
    assert!(folded.to_text().len() > 70_000);
    let capped = folded.capped(Limits::default());
    assert!(capped.dropped_frames);
    assert_eq!(capped.merged_stacks, 0);
    assert_eq!(capped.folded.total(), 10);
    let deep = capped
        .folded
        .stacks()
        .find(|(s, _)| s.ends_with(DEEPER_FRAMES))
        .unwrap();
    assert_eq!(deep.0.split(';').count(), 128);
    assert_eq!(deep.1, 7);
    assert!(capped.folded.to_text().len() <= Limits::default().max_bytes);
}

#[test]
fn stacks_that_differ_only_below_the_cut_merge() {
    let folded = Folded::parse("a;b;c;d 1\na;b;c;e 2\na;b 4\n").unwrap();
    let capped = folded.capped(Limits {
        max_bytes: 1 << 20,
        max_depth: 3,
    });
    assert_eq!(
        capped.folded.to_text(),
        format!("a;b 4\na;b;{DEEPER_FRAMES} 3\n")
    );
}

#[test]
fn the_lightest_stacks_become_one_catch_all_line() {
    let text: String = (0..100)
        .map(|i| format!("prog;main;function_{i:03} {}\n", i + 1))
        .collect();
    let folded = Folded::parse(&text).unwrap();
    let limits = Limits {
        max_bytes: 400,
        max_depth: 128,
    };
    let capped = folded.clone().capped(limits);
    let out = capped.folded.to_text();
    assert!(out.len() <= 400, "{out}");
    assert_eq!(capped.folded.total(), folded.total());
    assert!(!capped.dropped_frames);
    // The heaviest survive: function_099 (100 samples) down.
    assert!(out.contains("prog;main;function_099 100\n"), "{out}");
    let kept = capped.folded.len() as u64 - 1;
    assert_eq!(capped.merged_stacks, 100 - kept);
    let other: u64 = (1..=capped.merged_stacks).sum();
    assert!(out.contains(&format!("{OTHER_STACKS} {other}\n")), "{out}");
}

#[test]
fn a_profile_within_limits_is_unchanged() {
    let folded = Folded::parse("prog;main;work 5\n").unwrap();
    let capped = folded.clone().capped(Limits::default());
    assert_eq!(capped.folded, folded);
    assert!(!capped.dropped_frames);
    assert_eq!(capped.merged_stacks, 0);
}

fn folded_stacks() -> impl Strategy<Value = Folded> {
    let frame = "[a-z_]{1,12}|\\[unknown <[0-9a-f]{1,8}>\\]";
    let stack = prop::collection::vec(frame, 1..30).prop_map(|frames| frames.join(";"));
    prop::collection::vec((stack, 1u64..u64::MAX / 4096), 0..80).prop_map(|stacks| {
        let text: String = stacks.iter().map(|(s, c)| format!("{s} {c}\n")).collect();
        Folded::parse(&text).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn capped_text_fits_and_keeps_every_sample(
        folded in folded_stacks(),
        max_bytes in Limits::MIN_BYTES..8192usize,
        max_depth in 1usize..50,
    ) {
        let total = folded.total();
        let capped = folded.capped(Limits { max_bytes, max_depth });
        let text = capped.folded.to_text();
        prop_assert!(text.len() <= max_bytes, "{} > {max_bytes}", text.len());
        prop_assert_eq!(capped.folded.total(), total);
        prop_assert!(capped.folded.stacks().all(|(s, _)| s.split(';').count() <= max_depth));
        prop_assert_eq!(Folded::parse(&text).unwrap(), capped.folded);
    }

    #[test]
    fn text_round_trips(folded in folded_stacks()) {
        prop_assert_eq!(Folded::parse(&folded.to_text()).unwrap(), folded);
    }
}
