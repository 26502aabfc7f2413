//! The order of base and head inside each round: ABBA so slow drift lands on both sides equally,
//! or a seeded random order whose seed is recorded so a session can be replayed.

use benchgate_api::Side;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// How the two sides are ordered inside each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Schedule {
    /// Round k runs base first when k is even, head first when k is odd.
    Abba,
    /// Each round's order is drawn from a generator seeded with `seed`.
    Random { seed: u64 },
}

impl Schedule {
    /// A random schedule with a fresh seed (recorded in the schedule itself).
    pub fn random_unseeded() -> Self {
        Schedule::Random {
            seed: rand::rng().next_u64(),
        }
    }

    /// The run order of every round from 0 up to (excluding) `rounds`.
    pub fn orders(self) -> RoundOrders {
        RoundOrders {
            round: 0,
            rng: match self {
                Schedule::Abba => None,
                // Xoshiro256++ with `seed_from_u64` is specified to be portable, so a recorded
                // seed replays the same orders on any machine and rand version.
                Schedule::Random { seed } => Some(Xoshiro256PlusPlus::seed_from_u64(seed)),
            },
        }
    }
}

/// An endless iterator over the run order of rounds 0, 1, 2, …
#[derive(Debug, Clone)]
pub struct RoundOrders {
    round: u64,
    /// `None` for ABBA.
    rng: Option<Xoshiro256PlusPlus>,
}

impl Iterator for RoundOrders {
    type Item = [Side; 2];

    fn next(&mut self) -> Option<[Side; 2]> {
        let base_first = match &mut self.rng {
            None => self.round.is_multiple_of(2),
            Some(rng) => rng.next_u64() >> 63 == 0,
        };
        self.round += 1;
        Some(if base_first {
            [Side::Base, Side::Head]
        } else {
            [Side::Head, Side::Base]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::Side::{Base, Head};

    #[test]
    fn abba_alternates_starting_with_base() {
        let orders: Vec<_> = Schedule::Abba.orders().take(4).collect();
        assert_eq!(
            orders,
            vec![[Base, Head], [Head, Base], [Base, Head], [Head, Base]]
        );
    }

    #[test]
    fn random_replays_from_its_seed_and_mixes_orders() {
        let a: Vec<_> = Schedule::Random { seed: 7 }.orders().take(64).collect();
        let b: Vec<_> = Schedule::Random { seed: 7 }.orders().take(64).collect();
        assert_eq!(a, b);
        let base_first = a.iter().filter(|o| o[0] == Base).count();
        assert!((16..=48).contains(&base_first), "{base_first} of 64");
    }
}
