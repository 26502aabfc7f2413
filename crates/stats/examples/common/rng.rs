//! The simulations' random numbers: seeded, reproducible across platforms, no dependency.

#![allow(dead_code, reason = "each example uses the part it needs")]

/// xoshiro256++ seeded through SplitMix64: small, fast and reproducible across platforms.
pub struct Xoshiro256 {
    s: [u64; 4],
    spare_normal: Option<f64>,
}

impl Xoshiro256 {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self {
            s: [next(), next(), next(), next()],
            spare_normal: None,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on (0, 1), never exactly 0 so the log below is finite.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal by the Box–Muller transform, using both outputs.
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let r = (-2.0 * self.uniform().ln()).sqrt();
        let theta = std::f64::consts::TAU * self.uniform();
        self.spare_normal = Some(r * theta.sin());
        r * theta.cos()
    }

    /// One pair's log-ratio: two runs, each with log-normal noise of `spread`.
    pub fn pair(&mut self, effect: f64, spread: f64) -> f64 {
        let base = spread * self.normal();
        let head = effect + spread * self.normal();
        head - base
    }
}
