//! UTC dates for `batches` and `expire`, without a time zone database: civil dates to and from
//! days since the Unix epoch (Howard Hinnant's algorithms).

use std::time::{SystemTime, UNIX_EPOCH};

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the epoch.
pub fn format_utc(unix_s: u64) -> String {
    let s = unix_s as i64;
    let (y, m, d) = civil_from_days(s.div_euclid(86_400));
    let t = s.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

pub fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Parses `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM:SS[Z]` (UTC), or `Nd` (N days
/// before `now`) into seconds since the epoch; None if it is none of these.
pub fn parse_time(text: &str, now: u64) -> Option<u64> {
    if let Some(days) = text.strip_suffix('d') {
        let days: u64 = days.parse().ok()?;
        return Some(now.saturating_sub(days.saturating_mul(86_400)));
    }
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').unwrap_or(t))),
        None => (text, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts[..] else {
        return None;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let days_in_month = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    if d == 0 || d > days_in_month || y < 1970 {
        return None;
    }
    let mut seconds = days_from_civil(y, m, d) * 86_400;
    if let Some(time) = time {
        let parts: Vec<&str> = time.split(':').collect();
        let [h, min, s] = parts[..] else {
            return None;
        };
        let (h, min, s): (i64, i64, i64) = (h.parse().ok()?, min.parse().ok()?, s.parse().ok()?);
        if !(0..24).contains(&h) || !(0..60).contains(&min) || !(0..60).contains(&s) {
            return None;
        }
        seconds += h * 3600 + min * 60 + s;
    }
    Some(seconds as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_bad_ones_are_refused() {
        assert_eq!(parse_time("1970-01-01", 0), Some(0));
        assert_eq!(parse_time("2026-11-21", 0), Some(1_795_219_200));
        assert_eq!(format_utc(1_795_219_200), "2026-11-21T00:00:00Z");
        assert_eq!(
            parse_time("2024-02-29T12:30:05Z", 0).map(format_utc),
            Some("2024-02-29T12:30:05Z".into())
        );
        assert_eq!(parse_time("3d", 1_000_000), Some(1_000_000 - 3 * 86_400));
        for bad in [
            "",
            "2023-02-29",
            "2024-13-01",
            "24-01-01",
            "2024-01-01T25:00:00",
            "xd",
            "yesterday",
        ] {
            assert!(parse_time(bad, 0).is_none(), "{bad}");
        }
        for day in [0i64, 1, 59, 365, 10_957, 20_000, 30_000] {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
    }
}
