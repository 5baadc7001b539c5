//! `histogram_quantile` over classic buckets, as Prometheus's `bucketQuantile` computes it:
//! buckets sorted by upper bound, duplicates merged, counts forced monotonic, and the quantile
//! linearly interpolated inside the bucket that holds its rank.

/// The `q` quantile of cumulative `(upper bound, count)` buckets.
pub fn bucket_quantile(q: f64, buckets: &mut Vec<(f64, f64)>) -> f64 {
    if q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    if buckets.is_empty() {
        return f64::NAN;
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    if buckets[buckets.len() - 1].0 != f64::INFINITY {
        return f64::NAN;
    }
    // Merge buckets with the same bound (e.g. "1" and "1.0" after a relabel).
    buckets.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            earlier.1 += later.1;
            true
        } else {
            false
        }
    });
    // Counts may go down by a float rounding after rate(): keep them monotonic, and treat
    // counts within a relative 1e-12 of the previous as equal (Prometheus 2.55).
    let mut prev = buckets[0].1;
    for b in buckets.iter_mut().skip(1) {
        let curr = b.1;
        if curr == prev {
            continue;
        }
        if almost_equal(prev, curr, 1e-12) || curr < prev {
            b.1 = prev;
            continue;
        }
        prev = curr;
    }
    if buckets.len() < 2 {
        return f64::NAN;
    }
    let observations = buckets[buckets.len() - 1].1;
    if observations == 0.0 {
        return f64::NAN;
    }
    let mut rank = q * observations;
    let n = buckets.len();
    let b = buckets[..n - 1].partition_point(|x| x.1 < rank);
    if b == n - 1 {
        return buckets[n - 2].0;
    }
    if b == 0 && buckets[0].0 <= 0.0 {
        return buckets[0].0;
    }
    let (mut start, end, mut count) = (0.0, buckets[b].0, buckets[b].1);
    if b > 0 {
        start = buckets[b - 1].0;
        count -= buckets[b - 1].1;
        rank -= buckets[b - 1].1;
    }
    start + (end - start) * (rank / count)
}

/// Prometheus's `almost.Equal`: relative difference under `epsilon` (NaN equals NaN).
pub fn almost_equal(a: f64, b: f64, epsilon: f64) -> bool {
    if a.is_nan() && b.is_nan() || a == b {
        return true;
    }
    let min_normal = f64::MIN_POSITIVE;
    let abs_sum = a.abs() + b.abs();
    let diff = (a - b).abs();
    if a == 0.0 || b == 0.0 || abs_sum < min_normal {
        return diff < epsilon * min_normal;
    }
    diff / abs_sum.min(f64::MAX) < epsilon
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantile_is_interpolated_inside_its_bucket() {
        // 100 observations: 50 up to 0.1 s, 40 more up to 0.5 s, 10 more up to 1 s.
        let mut b = vec![
            (0.5, 90.0),
            (0.1, 50.0),
            (f64::INFINITY, 100.0),
            (1.0, 100.0),
        ];
        // p50 is the 50th: the top of the first bucket.
        assert!((bucket_quantile(0.5, &mut b.clone()) - 0.1).abs() < 1e-12);
        // p70 is the 20th of the 40 in (0.1, 0.5]: halfway.
        assert!((bucket_quantile(0.7, &mut b.clone()) - 0.3).abs() < 1e-12);
        // p25 is inside the first bucket, interpolated from zero.
        assert!((bucket_quantile(0.25, &mut b) - 0.05).abs() < 1e-12);
        // Without a +Inf bucket, or without observations: NaN.
        assert!(bucket_quantile(0.5, &mut vec![(1.0, 3.0)]).is_nan());
        assert!(bucket_quantile(0.5, &mut vec![(1.0, 0.0), (f64::INFINITY, 0.0)]).is_nan());
        // A rank in the +Inf bucket answers with the highest finite bound.
        let mut all_high = vec![(1.0, 0.0), (f64::INFINITY, 10.0)];
        assert_eq!(bucket_quantile(0.99, &mut all_high), 1.0);
    }
}
