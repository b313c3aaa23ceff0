//! `warden keygen` and secret hygiene: the secret key and passwords never reach stdout/stderr.

mod common;

use std::fs;

use base64::Engine as _;
use common::*;

/// Every form of the secret that must never be shown: the base64 line, the raw seed in hex.
fn secret_forms(key_file: &std::path::Path) -> Vec<String> {
    let text = fs::read_to_string(key_file).unwrap();
    let b64 = text.lines().nth(1).unwrap().to_string();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&b64)
        .unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    vec![
        b64[..40].to_string(),
        b64[100..140].to_string(),
        hex(&raw[62..94]),
        hex(&raw[62..94]).to_uppercase(),
        hex(&raw),
    ]
}

fn assert_no_secret(r: &Run, forms: &[String]) {
    for f in forms {
        assert!(
            !r.all().contains(f.as_str()),
            "secret material leaked: {}",
            r.all()
        );
    }
}

#[test]
fn keygen_writes_0600_key_and_prints_id_and_gh_command() {
    let t = tempfile::tempdir().unwrap();
    let out = run(warden(t.path()).args([
        "keygen",
        "--unencrypted",
        "--public-key",
        "keys/minisign.pub",
        "--secret-key",
        "secret/ci.key",
    ]))
    .expect(0);
    let pk = fs::read_to_string(t.path().join("keys/minisign.pub")).unwrap();
    let id = pk
        .lines()
        .next()
        .unwrap()
        .strip_prefix("untrusted comment: minisign public key ")
        .unwrap();
    assert_eq!(id.len(), 16);
    assert!(
        out.stdout.contains(&format!("key id      {id}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("gh secret set MINISIGN_SECRET_KEY --env release < secret/ci.key"),
        "{}",
        out.stdout
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(t.path().join("secret/ci.key"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert_no_secret(&out, &secret_forms(&t.path().join("secret/ci.key")));
    // Refuses to overwrite.
    let again = run(warden(t.path()).args([
        "keygen",
        "--unencrypted",
        "--public-key",
        "keys/minisign.pub",
        "--secret-key",
        "secret/ci.key",
    ]))
    .expect(2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
}

#[test]
fn keygen_refuses_a_secret_key_inside_a_git_work_tree() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("repo/.git")).unwrap();
    let out = run(warden(&t.path().join("repo")).args([
        "keygen",
        "--unencrypted",
        "--secret-key",
        "keys/minisign.key",
    ]))
    .expect(2);
    assert!(
        out.stderr.contains("inside the git work tree"),
        "{}",
        out.stderr
    );
    assert!(!t.path().join("repo/keys/minisign.key").exists());
    assert!(!t.path().join("repo/keys/minisign.pub").exists());
    // Outside the tree is fine, with the public key inside it.
    run(warden(&t.path().join("repo"))
        .args(["keygen", "--unencrypted", "--secret-key"])
        .arg(t.path().join("outside/k.key")))
    .expect(0);
    assert!(t.path().join("repo/keys/minisign.pub").is_file());
}

#[test]
fn keygen_without_password_source_and_no_terminal_fails() {
    let t = tempfile::tempdir().unwrap();
    let out = run(warden(t.path())
        .args(["keygen", "--secret-key", "k.key"])
        .stdin(std::process::Stdio::null()))
    .expect(2);
    assert!(out.stderr.contains("--password-env"), "{}", out.stderr);
    let out = run(warden(t.path()).env("EMPTY_PW", "").args([
        "keygen",
        "--secret-key",
        "k.key",
        "--password-env",
        "EMPTY_PW",
    ]))
    .expect(2);
    assert!(out.stderr.contains("empty"), "{}", out.stderr);
}

#[test]
fn secret_never_appears_in_any_output() {
    let t = tempfile::tempdir().unwrap();
    let pw = "pa55-w0rd-that-must-not-leak";
    let keygen = run(warden(t.path()).env("PW", pw).args([
        "keygen",
        "--password-env",
        "PW",
        "--public-key",
        "enc.pub",
        "--secret-key",
        "enc.key",
    ]))
    .expect(0);
    assert!(
        keygen
            .stdout
            .contains("gh secret set MINISIGN_PASSWORD --env release"),
        "{}",
        keygen.stdout
    );
    let (other_pk, plain_sk) = keypair(t.path(), "plain");
    let mut forms = secret_forms(&t.path().join("enc.key"));
    forms.extend(secret_forms(&plain_sk));
    forms.push(pw.to_string());
    assert_no_secret(&keygen, &forms);
    write(&t.path().join("d/a"), b"a");
    let plain_b64 = fs::read_to_string(&plain_sk)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    let garbled = format!("{}#{}", &plain_b64[..50], &plain_b64[51..]);
    let truncated = plain_b64[..150].to_string();
    let runs = vec![
        // good password, wrong password, mismatched public key, malformed keys, stdin key
        run(warden(t.path()).env("PW", pw).args([
            "sign",
            "d",
            "--no-checksums",
            "--secret-key",
            "enc.key",
            "--password-env",
            "PW",
        ])),
        run(warden(t.path()).env("PW", "not-the-password").args([
            "sign",
            "d",
            "--force",
            "--secret-key",
            "enc.key",
            "--password-env",
            "PW",
        ])),
        run(warden(t.path())
            .env("PW", pw)
            .args([
                "sign",
                "d",
                "--force",
                "--secret-key",
                "enc.key",
                "--password-env",
                "PW",
                "--public-key",
            ])
            .arg(&other_pk)),
        run(warden(t.path()).env("SK", &garbled).args([
            "sign",
            "d",
            "--force",
            "--secret-key-env",
            "SK",
        ])),
        run(warden(t.path()).env("SK", &truncated).args([
            "sign",
            "d",
            "--force",
            "--secret-key-env",
            "SK",
        ])),
        run(warden(t.path())
            .args(["sign", "d", "--force", "--secret-key"])
            .arg(&plain_sk)
            .args(["--public-key", "enc.pub"])),
        run(warden(t.path())
            .args(["sign", "d", "--force", "--secret-key-stdin"])
            .stdin(fs::File::open(&plain_sk).unwrap())),
    ];
    let codes: Vec<i32> = runs.iter().map(|r| r.code).collect();
    assert_eq!(codes, [0, 2, 2, 2, 2, 2, 0]);
    assert!(
        runs[1].stderr.contains("wrong password"),
        "{}",
        runs[1].stderr
    );
    assert!(
        runs[3]
            .stderr
            .contains("$SK: line 1: expected 212 base64 characters: not valid base64"),
        "{}",
        runs[3].stderr
    );
    assert!(
        runs[4]
            .stderr
            .contains("$SK: line 1: expected 212 base64 characters, found 150"),
        "{}",
        runs[4].stderr
    );
    for r in &runs {
        assert_no_secret(r, &forms);
    }
    // Nothing besides the key files holds the secret: the signatures written contain none of it.
    for entry in fs::read_dir(t.path().join("d")).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        for f in &forms {
            assert!(!text.contains(f.as_str()));
        }
    }
}
