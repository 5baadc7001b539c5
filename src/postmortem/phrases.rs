//! The sentences the draft builds from figures, each true by construction: the direction word
//! comes from which side of the threshold is bad and which way the value went, and a reading is
//! written with enough digits never to read the same as its threshold (`words::reading`).
//! Property tests (`tests/export_words.rs`) hold these functions to that.

use super::words;
use crate::config::Unit;
use crate::incident::event::Level;

/// One side of a threshold crossing, as the sentence needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossed {
    pub level: Level,
    pub value: f64,
    pub threshold: f64,
}

/// "warning" or "critical".
pub fn level_word(l: Level) -> &'static str {
    match l {
        Level::Warn => "warning",
        Level::Crit => "critical",
    }
}

/// The verb phrase and reading of one crossing: "rose above its critical threshold of 5%
/// (reading 5.03%)", or "reached its critical threshold of 70%" when the value is exactly at
/// it. `went_bad`: the crossing went the bad way (else it came back).
pub fn crossed(unit: Unit, bad_above: bool, went_bad: bool, c: Crossed) -> String {
    let (r, t) = words::reading_pair(unit, c.value, c.threshold);
    let phrase = phrase(bad_above, went_bad, c, &t);
    if c.value == c.threshold {
        return phrase;
    }
    format!("{phrase} (reading {r})")
}

/// [`crossed`] without the reading: "returned below its critical threshold of 5%".
pub fn threshold_phrase(unit: Unit, bad_above: bool, went_bad: bool, c: Crossed) -> String {
    phrase(bad_above, went_bad, c, &words::value(unit, c.threshold))
}

fn phrase(bad_above: bool, went_bad: bool, c: Crossed, t: &str) -> String {
    let level = level_word(c.level);
    if c.value == c.threshold {
        return format!("reached its {level} threshold of {t}");
    }
    // The side the value actually lies on decides the verb, so a value on the wrong side (a
    // crossing recorded from a stale reading) is never called "rose above".
    let above = c.value > c.threshold;
    let bad_side = above == bad_above;
    let verb = match (bad_side, went_bad, above) {
        (true, true, true) => "rose above",
        (true, true, false) => "fell below",
        (false, false, true) => "returned above",
        (false, false, false) => "returned below",
        (_, _, true) => "was above",
        (_, _, false) => "was below",
    };
    format!("{verb} its {level} threshold of {t}")
}

/// A panel's first bad crossing of both thresholds at once: "rose above its warning (80%) and
/// critical (95%) thresholds (reading 100%)".
pub fn crossed_both(unit: Unit, bad_above: bool, warn: Crossed, crit: Crossed) -> String {
    let beyond = |c: &Crossed| {
        if bad_above {
            c.value > c.threshold
        } else {
            c.value < c.threshold
        }
    };
    if !beyond(&crit) || !beyond(&warn) {
        return format!(
            "{}, and {}",
            crossed(unit, bad_above, true, warn),
            crossed(unit, bad_above, true, crit)
        );
    }
    let t = words::distinct(unit, &[crit.value, warn.threshold, crit.threshold]);
    let reading = if t[0] == t[2] || t[0] == t[1] {
        words::reading(unit, crit.value, crit.threshold)
    } else {
        t[0].clone()
    };
    format!(
        "{} its warning ({}) and critical ({}) thresholds (reading {reading})",
        words::crossing_verb(bad_above, true),
        t[1],
        t[2]
    )
}

/// A value before and after, written so the two differ when they differ: "2.6× → 1.1×",
/// "100% → 99.96%".
pub fn change(unit: Unit, before: f64, after: f64) -> String {
    let (a, b) = words::reading_pair(unit, after, before);
    format!("{b} → {a}")
}

/// How a value moved, in words: "rose from 42 milliseconds to 11 seconds", "fell from 81% to
/// 2%", or "stayed at 1.6 seconds" when the two read the same.
pub fn moved(unit: Unit, before: f64, after: f64) -> String {
    let (b, a) = (words::value(unit, before), words::value(unit, after));
    if b == a {
        return format!("stayed at {b}");
    }
    let verb = if after > before { "rose" } else { "fell" };
    format!("{verb} from {b} to {a}")
}

/// A peak as the draft tells it: the level held for two minutes or more with the momentary
/// maximum beside it ("Pool saturation held at 89% for two minutes or more (momentary
/// maximum 100%, 10:14)"), "rose to 100% and stayed there" for one that never came back, the
/// maximum alone when no level held that long, and "swung between 0% and 100%" for one that
/// went past its threshold and back again and again.
pub fn peak(name: &str, p: &super::facts::Peak) -> String {
    if let Some(swing) = &p.swing {
        return format!(
            "{name} swung between {} and {}, past its threshold {} times (the highest at {}).",
            swing.low_text, p.text, swing.times, p.at.clock
        );
    }
    match (&p.sustained_text, p.stayed) {
        (Some(s), true) if *s == p.text => {
            format!("{name} rose to {s} ({}) and stayed there.", p.at.clock)
        }
        (Some(s), true) => format!(
            "{name} rose to {s} and stayed there (momentary maximum {}, {}).",
            p.text, p.at.clock
        ),
        (Some(s), false) if *s == p.text => {
            format!(
                "{name} reached {s} and held it for two minutes or more ({}).",
                p.at.clock
            )
        }
        (Some(s), false) => format!(
            "{name} held at {s} for two minutes or more (momentary maximum {}, {}).",
            p.text, p.at.clock
        ),
        (None, _) => format!("{name} reached {} for a moment ({}).", p.text, p.at.clock),
    }
}

/// Retry amplification at its peak: "Retries made roughly 2.6 attempts for each user request
/// at the peak (07:20)."
pub fn amplification(a: &super::facts::Peak) -> String {
    format!(
        "Retries made roughly {} attempts for each user request at the peak ({}).",
        a.text, a.at.clock
    )
}

/// Latency that rose by half or more: "Median query latency rose from 39 milliseconds before
/// the impact to 9.2 seconds at its peak (07:02)."; `None` when it did not.
pub fn latency_rose(l: &super::facts::Latency) -> Option<String> {
    (l.peak > l.before * 1.5 && l.peak_text != l.before_text).then(|| {
        format!(
            "{} query latency{} rose from {} before the impact to {} at its peak ({}).",
            words::sentence(&l.statistic).trim_end_matches('.'),
            if l.with_wait.is_some() {
                ", the wait for a server included,"
            } else {
                ""
            },
            l.before_text,
            l.peak_text,
            l.at.clock
        )
    })
}

/// A backlog's rate of change before and after, per minute: "rising by 300 a minute →
/// falling by 520 a minute" ("steady" under one a minute).
pub fn rate_change(unit: Unit, before: f64, after: f64) -> String {
    format!("{} → {}", rate(unit, before), rate(unit, after))
}

fn rate(unit: Unit, per_minute: f64) -> String {
    if per_minute.abs() < 1.0 {
        return "steady".into();
    }
    let verb = if per_minute > 0.0 {
        "rising"
    } else {
        "falling"
    };
    format!(
        "{verb} by {} a minute",
        words::value(unit, per_minute.abs())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(level: Level, value: f64, threshold: f64) -> Crossed {
        Crossed {
            level,
            value,
            threshold,
        }
    }

    #[test]
    fn the_house_words_for_each_way() {
        assert_eq!(
            crossed(Unit::Percent, true, true, c(Level::Crit, 0.0503, 0.05)),
            "rose above its critical threshold of 5% (reading 5.03%)"
        );
        assert_eq!(
            crossed(Unit::Percent, true, false, c(Level::Crit, 0.2, 0.95)),
            "returned below its critical threshold of 95% (reading 20%)"
        );
        assert_eq!(
            crossed(Unit::Percent, false, true, c(Level::Crit, 0.7, 0.7)),
            "reached its critical threshold of 70%"
        );
        assert_eq!(
            crossed(Unit::Percent, false, true, c(Level::Warn, 0.6, 0.9)),
            "fell below its warning threshold of 90% (reading 60%)"
        );
        assert_eq!(
            crossed(Unit::Percent, false, false, c(Level::Warn, 1.0, 0.9)),
            "returned above its warning threshold of 90% (reading 100%)"
        );
        assert_eq!(
            crossed_both(
                Unit::Percent,
                true,
                c(Level::Warn, 1.0, 0.8),
                c(Level::Crit, 1.0, 0.95)
            ),
            "rose above its warning (80%) and critical (95%) thresholds (reading 100%)"
        );
        assert_eq!(change(Unit::Ratio, 2.64, 1.07), "2.6× → 1.1×");
        assert_eq!(change(Unit::Percent, 1.0, 0.9996), "100% → 99.96%");
        assert_eq!(moved(Unit::Seconds, 1.6, 1.61), "stayed at 1.6 seconds");
        assert_eq!(
            moved(Unit::Seconds, 0.042, 11.3),
            "rose from 42 milliseconds to 11 seconds"
        );
    }
}
