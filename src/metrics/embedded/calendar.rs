//! The date functions (`year`, `month`, `day_of_month`, `day_of_week`, `day_of_year`,
//! `days_in_month`, `hour`, `minute`), in UTC as Prometheus computes them: of each element's
//! value read as Unix seconds, or of the evaluation time when called without an argument.

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};

/// The date functions.
pub const NAMES: &[&str] = &[
    "year",
    "month",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "hour",
    "minute",
];

/// `name` of the instant `unix_secs` (whole seconds, as Go's `time.Unix(int64(v), 0)`); NaN
/// where the value is no representable time.
pub fn date_part(name: &str, unix_secs: f64) -> f64 {
    if !unix_secs.is_finite() {
        return f64::NAN;
    }
    // Go truncates the float toward zero.
    let Some(t) = DateTime::<Utc>::from_timestamp(unix_secs.trunc() as i64, 0) else {
        return f64::NAN;
    };
    f64::from(match name {
        "year" => t.year(),
        "month" => t.month() as i32,
        "day_of_month" => t.day() as i32,
        "day_of_week" => t.weekday().num_days_from_sunday() as i32,
        "day_of_year" => t.ordinal() as i32,
        "hour" => t.hour() as i32,
        "minute" => t.minute() as i32,
        _ => days_in_month(t.year(), t.month()),
    })
}

fn days_in_month(year: i32, month: u32) -> i32 {
    let (ny, nm) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    match (
        NaiveDate::from_ymd_opt(year, month, 1),
        NaiveDate::from_ymd_opt(ny, nm, 1),
    ) {
        (Some(a), Some(b)) => (b - a).num_days() as i32,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_a_known_instant() {
        // 2006-01-02 22:04:05 UTC, a Monday, as in Prometheus's tests.
        let t = 1136239445.0;
        assert_eq!(date_part("year", t), 2006.0);
        assert_eq!(date_part("month", t), 1.0);
        assert_eq!(date_part("day_of_month", t), 2.0);
        assert_eq!(date_part("day_of_week", t), 1.0);
        assert_eq!(date_part("day_of_year", t), 2.0);
        assert_eq!(date_part("hour", t), 22.0);
        assert_eq!(date_part("minute", t), 4.0);
        assert_eq!(date_part("days_in_month", 1454284800.0), 29.0); // February 2016
        assert_eq!(date_part("days_in_month", 1485907200.0), 28.0); // February 2017
        assert_eq!(date_part("year", 1230767999.0), 2008.0);
        assert_eq!(date_part("year", 1230768000.0), 2009.0);
        assert!(date_part("year", f64::NAN).is_nan());
    }
}
