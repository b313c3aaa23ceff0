//! Issue 51: C2SP tlog-witness on loopback. `warden log witness --serve` is a witness anyone can
//! run; `warden log cosign DIR --witness URL…` is the log's client. Two witnesses, one down: the
//! one that answers cosigns, learning its last size from its 409 the second time; a forked log
//! is refused (422) and kept as evidence; the spec's status codes for an unknown log, a bad
//! signature, a malformed request and a stale old size, with `text/x.tlog.size` on the 409.

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::{Child, Stdio};

use super::witness::witness_key;
use super::*;

/// A witness server: its process (killed on drop) and its submission URL.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(r: &LogRepo, key: &Path, state: &str) -> Served {
    let mut child = warden(r.dir())
        .args([
            "log",
            "witness",
            "--serve",
            "127.0.0.1:0",
            "--log-vkey",
            &r.vkey,
        ])
        .arg("--witness-key")
        .arg(key)
        .arg("--state")
        .arg(r.secrets.path().join(state))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_prefix("witness listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .trim()
        .to_string();
    Served {
        child,
        url: format!("http://{addr}"),
    }
}

fn cosign(r: &LogRepo, log: &str, urls: &[&str], vkeys: &[&str]) -> Run {
    let mut cmd = warden(r.dir());
    cmd.args(["log", "cosign", log, "--log-vkey", &r.vkey]);
    for u in urls {
        cmd.args(["--witness", u]);
    }
    for v in vkeys {
        cmd.args(["--witness-vkey", v]);
    }
    run(&mut cmd)
}

/// A raw HTTP/1.1 POST to the witness: status, content type, body.
fn post(url: &str, path: &str, body: &[u8]) -> (u16, String, String) {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let kind = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or("")
        .to_string();
    (status, kind, body.to_string())
}

/// The cosignature lines' base64 (different at every run: it holds the time) as `SIG`, and the
/// servers' ports as `PORT`.
fn scrub(text: &str) -> String {
    let re = regex::Regex::new(r"(— [a-z0-9.-]+) [A-Za-z0-9+/=]+").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    port.replace_all(&re.replace_all(text, "$1 SIG"), "127.0.0.1:PORT")
        .into_owned()
}

#[test]
fn two_witnesses_one_down_cosign_over_http_and_a_fork_is_refused() {
    let r = LogRepo::new();
    r.release("v1", true).expect(0);
    // The log as it was at size 1, to fork later.
    copy_dir(&r.dir().join("log"), &r.dir().join("fork"));
    let (key, vkey) = witness_key(&r, "witness-one.example");
    let (_, other_vkey) = witness_key(&r, "witness-two.example");
    let one = serve(&r, &key, "state-one");
    // Nothing listens on port 9 of the loopback: the second witness is down.
    let down = "http://127.0.0.1:9";
    let out = cosign(&r, "log", &[&one.url, down], &[&vkey, &other_vkey]).expect(0);
    assert_eq!(
        scrub(&out.stdout),
        "cosigned  http://127.0.0.1:PORT\n          — witness-one.example SIG\nFAILED    http://127.0.0.1:PORT: Connection refused (os error 111)\nlog log: checkpoint of size 1, 1 of 2 witnesses cosigned (at least 1 needed)\n"
    );
    // The checkpoint carries the cosignature: verifiers that require the witness accept it.
    r.verify("dist-v1", &["--log", "log", "--witness", &vkey])
        .expect(0);

    // Asked again for the same checkpoint: its new cosignature replaces its old one.
    let out = cosign(&r, "log", &[&one.url], &[&vkey]).expect(0);
    assert!(out.stdout.starts_with("cosigned  "), "{}", out.stdout);
    let checkpoint = std::fs::read_to_string(r.dir().join("log/checkpoint")).unwrap();
    assert_eq!(checkpoint.matches("— witness-one.example ").count(), 1);

    // The log grows: the witness knows size 1 (its 409 says so), and gets the proof from 1.
    r.release("v2", true).expect(0);
    let out = cosign(&r, "log", &[&one.url], &[&vkey]).expect(0);
    assert_eq!(
        scrub(&out.stdout),
        "cosigned  http://127.0.0.1:PORT\n          — witness-one.example SIG\nlog log: checkpoint of size 2, 1 of 1 witnesses cosigned (at least 1 needed)\n"
    );

    // A fork of size 2 (the log at size 1, another entry appended): refused, kept as evidence.
    write(&r.dir().join("dist-evil/app"), b"another app");
    run(warden(r.dir())
        .env("SOURCE_DATE_EPOCH", "1780000000")
        .args(["sign", "dist-evil", "--tag", "v2", "--secret-key"])
        .arg(&r.secret_key)
        .args(["--log", "fork", "--log-key"])
        .arg(r.log_key()))
    .expect(0);
    let before = std::fs::read(r.dir().join("fork/checkpoint")).unwrap();
    let out = cosign(&r, "fork", &[&one.url], &[&vkey]).expect(1);
    assert_eq!(
        scrub(&out.stdout),
        "FAILED    http://127.0.0.1:PORT: refused (422): the log forked at size 2: this witness cosigned another root for that size\nlog fork: checkpoint of size 2, 0 of 1 witnesses cosigned (at least 1 needed)\n"
    );
    assert_eq!(
        std::fs::read(r.dir().join("fork/checkpoint")).unwrap(),
        before
    );
    let evidence: Vec<_> = std::fs::read_dir(r.secrets.path().join("state-one"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("refused-"))
        .collect();
    assert_eq!(evidence.len(), 1);

    // The spec's answers, asked directly.
    let checkpoint = std::fs::read(r.dir().join("log/checkpoint")).unwrap();
    let body = |old: u64, note: &[u8]| {
        let mut b = format!("old {old}\n\n").into_bytes();
        b.extend_from_slice(note);
        b
    };
    // A stale old size: 409 with the size the witness knows, as text/x.tlog.size.
    assert_eq!(
        post(&one.url, "/add-checkpoint", &body(0, &checkpoint)),
        (409, "text/x.tlog.size".into(), "2\n".into())
    );
    // An old size beyond the checkpoint's: 400.
    assert_eq!(
        post(&one.url, "/add-checkpoint", &body(3, &checkpoint)).0,
        400
    );
    // A log this witness does not follow: 404.
    let unknown = String::from_utf8(checkpoint.clone()).unwrap().replacen(
        ORIGIN,
        "example.org/another-log",
        1,
    );
    assert_eq!(
        post(&one.url, "/add-checkpoint", &body(2, unknown.as_bytes())).0,
        404
    );
    // The log's signature altered: 403.
    let text = String::from_utf8(checkpoint.clone()).unwrap();
    let log_line = text
        .lines()
        .find(|l| l.starts_with(&format!("— {ORIGIN} ")))
        .unwrap();
    // A character past the key id (the first 4 bytes): the signature itself.
    let mut chars: Vec<char> = log_line.chars().collect();
    let at = format!("— {ORIGIN} ").chars().count() + 12;
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    let altered = text.replace(log_line, &chars.into_iter().collect::<String>());
    assert_eq!(
        post(&one.url, "/add-checkpoint", &body(2, altered.as_bytes())).0,
        403
    );
    // Not a request at all: 400; another path: 404.
    assert_eq!(post(&one.url, "/add-checkpoint", b"hello").0, 400);
    assert_eq!(post(&one.url, "/other", b"").0, 404);
    // The same checkpoint again, from the size it knows: cosigned again (200).
    let (status, _, line) = post(&one.url, "/add-checkpoint", &body(2, &checkpoint));
    assert_eq!(
        (status, scrub(&line)),
        (200, "— witness-one.example SIG\n".into())
    );
}
