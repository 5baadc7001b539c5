//! Compensated (Kahan–Neumaier) summation, as Prometheus 2.55 sums in `sum`, `avg`,
//! `sum_over_time`, `avg_over_time`, `stddev_over_time` and `deriv`: 2 + 8 + 1e100 - 1e100
//! is 10, not 0.

/// A running compensated sum.
#[derive(Debug, Clone, Copy, Default)]
pub struct KahanSum {
    sum: f64,
    c: f64,
}

impl KahanSum {
    /// Add `inc`; once the sum is infinite the compensation is dropped (it would be NaN).
    pub fn add(&mut self, inc: f64) {
        let t = self.sum + inc;
        if t.is_infinite() {
            self.c = 0.0;
        } else if self.sum.abs() >= inc.abs() {
            self.c += (self.sum - t) + inc;
        } else {
            self.c += (inc - t) + self.sum;
        }
        self.sum = t;
    }

    /// The raw running sum, without the compensation.
    pub fn raw(&self) -> f64 {
        self.sum
    }

    /// The compensated total.
    pub fn value(&self) -> f64 {
        self.sum + self.c
    }
}

/// The compensated sum of `values`; an infinite sum is returned as it is.
pub fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut k = KahanSum::default();
    for v in values {
        k.add(v);
    }
    if k.raw().is_infinite() {
        k.raw()
    } else {
        k.value()
    }
}

/// The mean as Prometheus 2.55 computes it: a compensated sum divided by the count, switching
/// to an incremental mean when the sum would overflow, and keeping an infinite mean when the
/// remaining values cannot change it (so {Inf, Inf, -Inf} is NaN but {Inf, 2} is Inf).
pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut acc = Mean::default();
    for v in values {
        acc.add(v);
    }
    acc.value()
}

/// A running mean in the manner of [`mean`], for aggregations that feed values one at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mean {
    count: f64,
    sum: f64,
    /// The compensation, of the sum or (once incremental) of the mean.
    c: f64,
    incremental: bool,
    mean: f64,
}

/// One step of Neumaier's summation: `(sum + inc, compensation)`.
fn sum_inc(inc: f64, sum: f64, c: f64) -> (f64, f64) {
    let mut k = KahanSum { sum, c };
    k.add(inc);
    (k.sum, k.c)
}

impl Mean {
    pub fn add(&mut self, v: f64) {
        self.count += 1.0;
        if !self.incremental {
            let (sum, c) = sum_inc(v, self.sum, self.c);
            if self.count == 1.0 || !sum.is_infinite() {
                (self.sum, self.c) = (sum, c);
                return;
            }
            // The sum would overflow: carry on with an incremental mean from here.
            self.incremental = true;
            self.mean = self.sum / (self.count - 1.0);
            self.c /= self.count - 1.0;
        }
        if self.mean.is_infinite() {
            // An infinite mean stays unless an infinity of the other sign or a NaN arrives.
            if v.is_infinite() && (self.mean > 0.0) == (v > 0.0) {
                return;
            }
            if !v.is_infinite() && !v.is_nan() {
                return;
            }
        }
        let corrected = self.mean + self.c;
        (self.mean, self.c) = sum_inc(v / self.count - corrected / self.count, self.mean, self.c);
    }

    /// The mean so far (NaN before any value).
    pub fn value(&self) -> f64 {
        if self.count == 0.0 {
            f64::NAN
        } else if self.incremental {
            self.mean + self.c
        } else {
            (self.sum + self.c) / self.count
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensation_keeps_what_a_large_term_would_swallow() {
        assert_eq!(sum([2.0, 8.0, 1e100, -1e100]), 10.0);
        assert_eq!([2.0, 8.0, 1e100, -1e100].iter().sum::<f64>(), 0.0);
        assert_eq!(mean([2.0, 8.0, 1e100, -1e100]), 2.5);
        assert_eq!(sum([1.0, f64::INFINITY]), f64::INFINITY);
    }

    #[test]
    fn infinite_means_follow_prometheus() {
        let inf = f64::INFINITY;
        assert!(mean([inf, inf, -inf]).is_nan());
        assert_eq!(mean([inf, 2.0]), inf);
        assert_eq!(mean([2.0, -inf]), -inf);
        assert!(mean([inf, f64::NAN]).is_nan());
        // Overflowing sums switch to the incremental mean.
        assert_eq!(mean([f64::MAX, f64::MAX]), f64::MAX);
        assert!(mean(std::iter::empty()).is_nan());
    }
}
