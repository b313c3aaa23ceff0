//! A progress line on stderr while `sign` and `verify` hash and `audit --org` reads an
//! organisation, for people at a terminal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use release_warden::minisign::Progress;

/// What a progress counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes hashed (with a rate).
    Bytes,
    /// Repositories audited.
    Repositories,
}

/// The line shown for `done` of `total` (0: not known yet) after `elapsed`.
pub(crate) fn message(what: &str, unit: Unit, done: u64, total: u64, elapsed: Duration) -> String {
    let per_sec = done as f64 / elapsed.as_secs_f64().max(0.001);
    let left = |total: u64| {
        let seconds = total.saturating_sub(done) as f64 / per_sec.max(f64::MIN_POSITIVE);
        // Nothing done yet: no estimate, rather than an absurd one.
        if done == 0 {
            String::new()
        } else {
            format!(
                ", {} left",
                indicatif::HumanDuration(Duration::from_secs_f64(seconds.min(1e7)))
            )
        }
    };
    match (unit, total) {
        (Unit::Bytes, 0) => format!(
            "{what}: {} hashed ({:.0} MB/s)",
            indicatif::HumanBytes(done),
            per_sec / 1e6
        ),
        (Unit::Bytes, total) => format!(
            "{what}: {} of {} ({:.0} MB/s{})",
            indicatif::HumanBytes(done),
            indicatif::HumanBytes(total),
            per_sec / 1e6,
            left(total)
        ),
        (Unit::Repositories, 0) => format!("{what}: listing the repositories"),
        (Unit::Repositories, total) => format!(
            "{what}: {done} of {total} repositories{}",
            if done == 0 {
                String::new()
            } else {
                left(total).replacen(", ", " (", 1) + ")"
            }
        ),
    }
}

/// A progress line on stderr, shown only on a terminal and only once the work has taken more
/// than a second; cleared when dropped.
pub(crate) struct ProgressDisplay {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressDisplay {
    pub(crate) fn start(counter: Option<Progress>, enabled: bool, what: &'static str) -> Self {
        Self::start_with_total(counter, None, enabled, what)
    }

    /// Bytes hashed of a total that becomes known (`total`, once set above 0).
    pub(crate) fn start_with_total(
        counter: Option<Progress>,
        total: Option<Progress>,
        enabled: bool,
        what: &'static str,
    ) -> Self {
        Self::counting(counter, total, Unit::Bytes, enabled, what.to_string())
    }

    /// `counter` of `total` (once set above 0), in `unit`.
    pub(crate) fn counting(
        counter: Option<Progress>,
        total: Option<Progress>,
        unit: Unit,
        enabled: bool,
        what: String,
    ) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let thread = match (counter, enabled) {
            (Some(counter), true) => {
                let done = done.clone();
                Some(std::thread::spawn(move || {
                    let tick = Duration::from_millis(100);
                    let start = std::time::Instant::now();
                    while start.elapsed() < Duration::from_secs(1) {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(tick);
                    }
                    let bar = indicatif::ProgressBar::new_spinner();
                    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
                        bar.set_style(style);
                    }
                    // Counted since the work started (indicatif would measure from the moment
                    // the bar appears).
                    while !done.load(Ordering::Relaxed) {
                        let total = total.as_ref().map_or(0, |t| t.load(Ordering::Relaxed));
                        bar.set_message(message(
                            &what,
                            unit,
                            counter.load(Ordering::Relaxed),
                            total,
                            start.elapsed(),
                        ));
                        bar.tick();
                        std::thread::sleep(tick);
                    }
                    bar.finish_and_clear();
                }))
            }
            _ => None,
        };
        ProgressDisplay { done, thread }
    }
}

impl Drop for ProgressDisplay {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_how_much_of_the_total_and_the_time_left() {
        let s = Duration::from_secs;
        let gib = 1 << 30;
        assert_eq!(
            message("signing", Unit::Bytes, gib, 4 * gib, s(2)),
            "signing: 1.00 GiB of 4.00 GiB (537 MB/s, 6 seconds left)"
        );
        assert_eq!(
            message("signing", Unit::Bytes, 0, 4 * gib, s(1)),
            "signing: 0 B of 4.00 GiB (0 MB/s)"
        );
        assert_eq!(
            message("verifying", Unit::Bytes, 3_000_000, 0, s(1)),
            "verifying: 2.86 MiB hashed (3 MB/s)"
        );
        assert_eq!(
            message("auditing acme", Unit::Repositories, 0, 0, s(1)),
            "auditing acme: listing the repositories"
        );
        assert_eq!(
            message("auditing acme", Unit::Repositories, 0, 200, s(1)),
            "auditing acme: 0 of 200 repositories"
        );
        assert_eq!(
            message("auditing acme", Unit::Repositories, 50, 200, s(10)),
            "auditing acme: 50 of 200 repositories (30 seconds left)"
        );
    }
}
