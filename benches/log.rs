//! Benchmark (not a test): the transparency log at 100,000 entries. Goals (issue 38): appending a
//! release's signature in under 50 ms, proving an entry's inclusion in under 10 ms. Measured
//! beside the alternative without tiles: recomputing the tree from every entry (`log verify`).
//!
//!     cargo bench --bench log

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use release_warden::minisign::PublicKey;
use release_warden::release::log_ops::{self as tlog, LogKey};
use release_warden::trust::TrustedKeys;

const ORIGIN: &str = "bench.example/log";
const ENTRIES: u64 = 100_000;

fn warden(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("warden");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let t = tempfile::tempdir().expect("temp");
    let dir = t.path();
    let log = dir.join("log");
    let key_file = dir.join("log.key");
    let init = tlog::init(&log, ORIGIN, &key_file, None).expect("log init");
    let key = LogKey::parse(&std::fs::read_to_string(&key_file).unwrap(), "log.key").unwrap();
    let vkey = serde_json::to_value(&init).unwrap()["vkey"]
        .as_str()
        .unwrap()
        .to_string();
    let trust = release_warden::trust::LogTrust::new(
        release_warden::trust::parse_vkey(&vkey, "vkey").unwrap(),
        Vec::new(),
        0,
    )
    .unwrap();

    let started = Instant::now();
    tlog::append_synthetic(&log, &key, ENTRIES).expect("append");
    println!(
        "built a log of {ENTRIES} entries in {:.1} s (batches of 1,000)",
        started.elapsed().as_secs_f64()
    );

    // Releases to append, signed beforehand.
    warden(
        dir,
        &[
            "keygen",
            "--unencrypted",
            "--public-key",
            "release.pub",
            "--secret-key",
            "release.key",
        ],
    );
    let public = PublicKey::from_file(&dir.join("release.pub")).unwrap();
    const RELEASES: usize = 21;
    for i in 0..RELEASES {
        let dist = format!("dist-{i}");
        std::fs::create_dir_all(dir.join(&dist)).unwrap();
        std::fs::write(dir.join(&dist).join("app"), format!("app {i}")).unwrap();
        warden(
            dir,
            &[
                "sign",
                &dist,
                "--secret-key",
                "release.key",
                "--tag",
                &format!("v{i}"),
            ],
        );
    }
    let signers = TrustedKeys::only(public.clone());
    let mut appends = Vec::new();
    for i in 0..RELEASES - 1 {
        let sums = dir.join(format!("dist-{i}/SHA256SUMS"));
        let started = Instant::now();
        tlog::append_release(&log, &key, &sums, &signers).expect("append");
        appends.push(started.elapsed());
    }
    appends.sort();
    // The command, end to end (process start, key and keys folder read, append, proof written).
    std::fs::create_dir_all(dir.join("keys")).unwrap();
    std::fs::copy(dir.join("release.pub"), dir.join("keys/release.pub")).unwrap();
    let last = format!("dist-{}", RELEASES - 1);
    let started = Instant::now();
    warden(
        dir,
        &[
            "log",
            "append",
            "log",
            "--release",
            &last,
            "--log-key",
            "log.key",
        ],
    );
    let command = started.elapsed();
    println!(
        "append one release at {ENTRIES}: median {:.2} ms, worst {:.2} ms (library); `warden log append` {:.1} ms",
        ms(appends[appends.len() / 2]),
        ms(*appends.last().unwrap()),
        ms(command)
    );

    let mut proofs = Vec::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let index = x % ENTRIES;
        let started = Instant::now();
        let len = tlog::prove_entry(&log, &trust, index).expect("prove");
        proofs.push(started.elapsed());
        assert!(len <= 17);
    }
    proofs.sort();
    println!(
        "prove an entry's inclusion at {ENTRIES}: median {:.2} ms, worst {:.2} ms (checkpoint verified, tiles read and authenticated)",
        ms(proofs[proofs.len() / 2]),
        ms(*proofs.last().unwrap())
    );

    let started = Instant::now();
    let report = tlog::verify_log(log.to_str().unwrap(), &trust).expect("verify");
    let full = started.elapsed();
    assert_eq!(report.exit_code(), 0);
    println!(
        "the alternative without tiles, recomputing the tree from every entry (`log verify`): {:.0} ms, {:.0}x the median proof",
        ms(full),
        ms(full) / ms(proofs[proofs.len() / 2])
    );
}
