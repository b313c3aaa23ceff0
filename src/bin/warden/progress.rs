//! A progress bar on stderr while `sign` and `verify` hash, for people at a terminal.

use release_warden::release::Progress;

/// A progress bar on stderr while hashing, shown only on a terminal and only once the work has
/// taken more than a second; cleared when dropped.
pub(crate) struct ProgressDisplay {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressDisplay {
    pub(crate) fn start(counter: Option<Progress>, enabled: bool, what: &'static str) -> Self {
        Self::start_with_total(counter, None, enabled, what)
    }

    /// The same, for work whose size becomes known (`total`, once set above 0): bytes of the
    /// total, rate and time left.
    pub(crate) fn start_with_total(
        counter: Option<Progress>,
        total: Option<Progress>,
        enabled: bool,
        what: &'static str,
    ) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let thread = match (counter, enabled) {
            (Some(counter), true) => {
                let done = done.clone();
                Some(std::thread::spawn(move || {
                    let tick = std::time::Duration::from_millis(100);
                    let start = std::time::Instant::now();
                    while start.elapsed() < std::time::Duration::from_secs(1) {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(tick);
                    }
                    let bar = indicatif::ProgressBar::new_spinner();
                    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
                        bar.set_style(style);
                    }
                    // Bytes and rate since the work started (indicatif would measure from the
                    // moment the bar appears).
                    while !done.load(Ordering::Relaxed) {
                        let bytes = counter.load(Ordering::Relaxed);
                        let per_sec = bytes as f64 / start.elapsed().as_secs_f64().max(0.001);
                        let rate = per_sec / 1e6;
                        let total = total
                            .as_ref()
                            .map(|t| t.load(Ordering::Relaxed))
                            .filter(|t| *t > 0);
                        bar.set_message(match total {
                            Some(total) => {
                                let left = total.saturating_sub(bytes) as f64 / per_sec.max(1.0);
                                format!(
                                    "{what}: {} of {} ({rate:.0} MB/s, {} left)",
                                    indicatif::HumanBytes(bytes),
                                    indicatif::HumanBytes(total),
                                    indicatif::HumanDuration(std::time::Duration::from_secs_f64(
                                        left
                                    ))
                                )
                            }
                            None => format!(
                                "{what}: {} hashed ({rate:.0} MB/s)",
                                indicatif::HumanBytes(bytes)
                            ),
                        });
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
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
