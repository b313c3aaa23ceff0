//! Small helpers several domains share (a leaf: it imports nothing of the crate): lowercase
//! hex, a parallel map over the cores, and today's date.

/// Lowercase hex of `bytes`.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `N` bytes written in `s` as hex (either case); `None` for anything else.
/// The SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

pub(crate) fn from_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Whether `jobs` parallel jobs leave cores idle (then each job splits its hashing).
pub(crate) fn cores_to_spare(jobs: usize) -> bool {
    std::thread::available_parallelism().is_ok_and(|n| jobs < n.get())
}

/// Runs `f` over `items` on up to `available_parallelism()` threads, keeping the input order.
/// Work is handed out one item at a time, so one large artifact does not stall the others.
pub(crate) fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item is processed")
        })
        .collect()
}

/// Today's date as (year, month, day), UTC.
pub fn today() -> (i64, u8, u8) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    civil_from_days(secs.div_euclid(86_400))
}

/// `secs` since the epoch as RFC 3339 in UTC: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(secs: u64) -> String {
    utc_time(secs).replacen(' ', "T", 1).replace(" UTC", "Z")
}

/// `secs` since the epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn utc_time(secs: u64) -> String {
    let secs = secs as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// Seconds since the epoch, now (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A UTC time as GitHub writes it (`2025-12-02T03:00:10Z`, fractions and a `+00:00` offset
/// allowed) as seconds since the epoch; `None` for anything else.
pub(crate) fn parse_utc(text: &str) -> Option<u64> {
    let t = text
        .strip_suffix('Z')
        .or_else(|| text.strip_suffix("+00:00"))?;
    let (date, time) = t.split_once('T')?;
    let time = time.split('.').next()?;
    let num = |s: &str, len: usize| -> Option<i64> {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?, 4)?, num(d.next()?, 2)?, num(d.next()?, 2)?);
    let mut c = time.split(':');
    let (h, min, sec) = (num(c.next()?, 2)?, num(c.next()?, 2)?, num(c.next()?, 2)?);
    if d.next().is_some()
        || c.next().is_some()
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || h > 23
        || min > 59
        || sec > 60
    {
        return None;
    }
    let days = days_from_civil(y, m as u8, day as u8);
    u64::try_from(days * 86_400 + h * 3600 + min * 60 + sec).ok()
}

/// A proleptic Gregorian date to days since 1970-01-01 (H. Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: u8, d: u8) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_422), (2025, 11, 30));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        for days in [-1, 0, 11_016, 20_422, 21_184] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(1_764_644_410), "2025-12-02 03:00:10 UTC");
        assert_eq!(rfc3339(1_764_644_410), "2025-12-02T03:00:10Z");
        assert_eq!(parse_utc("2025-12-02T03:00:10Z"), Some(1_764_644_410));
        assert_eq!(
            parse_utc("2025-12-02T03:00:10.123+00:00"),
            Some(1_764_644_410)
        );
        for bad in [
            "2025-12-02 03:00:10Z",
            "2025-12-02T03:00:10",
            "2025-13-02T03:00:10Z",
            "x",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(to_hex(&[0, 0xab, 0x10]), "00ab10");
    }

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(
            parallel_map(&items, |x| x * 2),
            items.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(parallel_map(&Vec::<u32>::new(), |x| *x).is_empty());
    }
}
