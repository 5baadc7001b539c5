//! Keys typed for a dialog that had not come up. A person types in bursts; a dialog that opens
//! by itself (the executor asks, a run pauses) in the middle of a burst must not receive the
//! rest of it: "batch 3⏎" typed while a decision came up instead is not an answer to it. The
//! runtime stamps each key and asks [`Typing::fresh`] whether the burst it belongs to began
//! after the input target last changed by itself. Pure, with `now` passed in, as the pacer is.

use std::time::{Duration, Instant};

/// Keys closer together than this are one burst (typing speed is 100–200 ms a key; seeing a
/// new dialog and starting to answer it takes longer).
pub const BURST_GAP: Duration = Duration::from_millis(300);

#[derive(Debug, Default)]
pub struct Typing {
    last_key: Option<Instant>,
    burst_start: Option<Instant>,
    /// The model's count of input targets changed by something other than a key, and when
    /// the runtime saw it change.
    target: u64,
    target_since: Option<Instant>,
}

impl Typing {
    /// The model's input-target count after a message at `now` (see
    /// `Model::targets_changed`): a change starts a new target.
    pub fn target(&mut self, count: u64, now: Instant) {
        if count != self.target {
            self.target = count;
            self.target_since = Some(now);
        }
    }

    /// A key at `now`: whether its burst began after the last target change (`false`: it
    /// was typed for what was there before).
    pub fn fresh(&mut self, now: Instant) -> bool {
        let new_burst = self
            .last_key
            .is_none_or(|last| now.saturating_duration_since(last) >= BURST_GAP);
        if new_burst {
            self.burst_start = Some(now);
        }
        self.last_key = Some(now);
        match (self.burst_start, self.target_since) {
            (Some(start), Some(since)) => start >= since,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    #[test]
    fn a_burst_begun_before_a_dialog_opened_by_itself_is_not_for_it() {
        let t0 = Instant::now();
        let mut t = Typing::default();
        // "batch 3⏎" at 120 ms a key; the decision comes up after "ba".
        let mut fresh = Vec::new();
        for (i, _) in "batch 3\r".chars().enumerate() {
            let at = ms(t0, 120 * i as u64);
            if i == 2 {
                t.target(1, ms(t0, 200));
            }
            fresh.push(t.fresh(at));
        }
        assert_eq!(
            fresh,
            [true, true, false, false, false, false, false, false]
        );
        // After a pause the next key is a fresh answer.
        assert!(t.fresh(ms(t0, 120 * 7 + 400)));
        // A burst that begins after the dialog opened is for it, however fast.
        t.target(2, ms(t0, 5_000));
        assert!(t.fresh(ms(t0, 5_350)));
        assert!(t.fresh(ms(t0, 5_400)));
    }

    #[test]
    fn without_a_change_every_key_is_fresh() {
        let t0 = Instant::now();
        let mut t = Typing::default();
        t.target(0, t0);
        assert!((0..20).all(|i| t.fresh(ms(t0, 10 * i))));
    }
}
