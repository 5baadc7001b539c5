//! A fluid histogram: the model observes masses of requests whose latency is spread
//! log-normally around a median, not single requests, so one hour of a busy fleet costs a few
//! thousand bucket updates per step rather than millions of observations.

/// Latency buckets (seconds) shared by every histogram the simulator exports: dense around the
/// healthy 10–100 ms, reaching past the 30 s acquire timeout.
pub const BUCKETS: [f64; 15] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 60.0,
];

/// Cumulative counts per bucket (fractional: fluid masses), sum and count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FluidHistogram {
    /// Mass at or below each bound of [`BUCKETS`] (cumulative, as Prometheus exposes it).
    pub cumulative: [f64; BUCKETS.len()],
    pub sum: f64,
    pub count: f64,
}

impl FluidHistogram {
    /// Observe `mass` requests whose values are log-normal with this median and sigma
    /// (sigma 0 is a point mass).
    pub fn observe(&mut self, median: f64, sigma: f64, mass: f64) {
        if mass <= 0.0 || !median.is_finite() {
            return;
        }
        let median = median.max(1e-6);
        self.count += mass;
        // The mean of a log-normal is median·e^(σ²/2).
        self.sum += mass * median * (sigma * sigma / 2.0).exp();
        for (c, bound) in self.cumulative.iter_mut().zip(BUCKETS) {
            *c += mass * lognormal_cdf(bound, median, sigma);
        }
    }
}

/// P(X ≤ x) for X log-normal with the given median and sigma.
pub fn lognormal_cdf(x: f64, median: f64, sigma: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if sigma <= 0.0 {
        return if x >= median { 1.0 } else { 0.0 };
    }
    let z = (x / median).ln() / sigma;
    normal_cdf(z)
}

/// Standard normal CDF through erf (Abramowitz–Stegun 7.1.26, error below 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
}

fn erf(x: f64) -> f64 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_is_half_at_the_median_and_monotone() {
        assert!((lognormal_cdf(0.042, 0.042, 0.3) - 0.5).abs() < 1e-6);
        let mut last = 0.0;
        for b in BUCKETS {
            let p = lognormal_cdf(b, 0.2, 0.5);
            assert!(p >= last);
            last = p;
        }
    }

    #[test]
    fn observing_keeps_buckets_cumulative() {
        let mut h = FluidHistogram::default();
        h.observe(0.042, 0.3, 100.0);
        h.observe(12.0, 0.3, 50.0);
        assert!((h.count - 150.0).abs() < 1e-9);
        for w in h.cumulative.windows(2) {
            assert!(w[0] <= w[1]);
        }
        // 42 ms lands between the 25 ms and 100 ms bounds; 12 s above 5 s.
        assert!(h.cumulative[1] < 10.0 && h.cumulative[4] > 95.0);
        assert!(h.cumulative[9] < 101.0 && h.cumulative[14] > 149.0);
    }
}
