//! `warden keygen` and secret hygiene: the secret key and passwords never reach stdout, stderr
//! or any file written besides the key file itself.

use std::fs;

use crate::common::*;
use base64::Engine as _;

/// Every form of the secret that must never be shown: slices of the base64 line, and the seed
/// (decrypted first when `password` is given) in hex and base64.
fn secret_forms(key_file: &std::path::Path, password: Option<&str>) -> Vec<String> {
    let text = fs::read_to_string(key_file).unwrap();
    let b64 = text.lines().nth(1).unwrap().to_string();
    let sk_box = minisign::SecretKeyBox::from_string(&text).unwrap();
    let raw = match password {
        Some(p) => minisign::SecretKey::from_box(sk_box, Some(p.to_string())),
        None => minisign::SecretKey::from_unencrypted_box(sk_box),
    }
    .unwrap()
    .to_bytes();
    let seed: &[u8; 32] = raw[62..94].try_into().unwrap();
    // Decrypted for real: the seed yields the public key stored after it.
    assert_eq!(
        ed25519_dalek::SigningKey::from_bytes(seed)
            .verifying_key()
            .as_bytes(),
        &raw[94..126]
    );
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let seed_b64 = base64::engine::general_purpose::STANDARD.encode(seed);
    vec![
        b64[..40].to_string(),
        b64[84..124].to_string(),
        b64[150..].to_string(),
        hex(seed),
        hex(seed).to_uppercase(),
        hex(&seed[..12]),
        seed_b64[..24].to_string(),
    ]
}

/// Every file under `dir` except the secret key files themselves.
fn files_besides(dir: &std::path::Path, key_files: &[&std::path::Path]) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| !key_files.contains(&p.as_path()))
        .collect()
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
    let keygen = || {
        run(warden(t.path()).args([
            "keygen",
            "--unencrypted",
            "--public-key",
            "keys/minisign.pub",
            "--secret-key",
            "secret/ci.key",
        ]))
    };
    let out = keygen().expect(0);
    let pk = fs::read_to_string(t.path().join("keys/minisign.pub")).unwrap();
    let id = pk
        .lines()
        .next()
        .unwrap()
        .strip_prefix("untrusted comment: minisign public key ")
        .unwrap();
    assert_eq!(id.len(), 16);
    assert_eq!(
        out.stdout,
        format!(
            "\
key id      {id}
public key  keys/minisign.pub  (commit this file)
secret key  secret/ci.key  (unencrypted, mode 0600; never commit it)
revocation  secret/ci.key.revoke.toml  (mode 0600; keep it offline with the backup: if the key is lost or stolen, `warden keys revoke {id} --statement secret/ci.key.revoke.toml`)

Store the secret key in the GitHub environment that signs releases (e.g. \"release\"):
  gh secret set MINISIGN_SECRET_KEY --env release < secret/ci.key
then remove the local copy once it is backed up offline.
"
        )
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
    assert_no_secret(&out, &secret_forms(&t.path().join("secret/ci.key"), None));
    // Refuses to overwrite.
    let again = keygen().expect(2);
    assert_eq!(
        again.stderr,
        "warden: keys/minisign.pub already exists (use --force to replace it)\n"
    );
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
    assert_eq!(
        filter_dir(&out.stderr, t.path()),
        "warden: refusing to write the secret key inside the git work tree [DIR]/repo: choose a path outside it, e.g. --secret-key ~/.minisign/minisign.key\n"
    );
    assert!(!t.path().join("repo/keys/minisign.key").exists());
    assert!(!t.path().join("repo/keys/minisign.pub").exists());
    // A home folder inside the tree: the default ~/.minisign/ is refused, and not suggested.
    fs::create_dir_all(t.path().join("repo/home")).unwrap();
    let out = run(warden(&t.path().join("repo"))
        .env("HOME", t.path().join("repo/home"))
        .args(["keygen", "--unencrypted"]))
    .expect(2);
    assert_eq!(
        filter_dir(&out.stderr, t.path()),
        "warden: refusing to write the secret key inside the git work tree [DIR]/repo: choose a path outside it (the home folder [DIR]/repo/home is inside a git work tree too, so ~/.minisign/ will not do)\n"
    );
    assert!(
        !t.path().join("repo/home/.minisign").exists(),
        "nothing is created before the refusal"
    );
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
    assert_eq!(
        out.stderr,
        "warden: no password given and stdin is not a terminal: pass --password-env VAR, or --unencrypted for a key without password\n"
    );
    let out = run(warden(t.path()).env("EMPTY_PW", "").args([
        "keygen",
        "--secret-key",
        "k.key",
        "--password-env",
        "EMPTY_PW",
    ]))
    .expect(2);
    assert_eq!(
        out.stderr,
        "warden: environment variable EMPTY_PW (--password-env) is empty\n"
    );
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
        keygen.stdout.ends_with(
            "\
  gh secret set MINISIGN_SECRET_KEY --env release < enc.key
  printf '%s' \"$PW\" | gh secret set MINISIGN_PASSWORD --env release
then remove the local copy once it is backed up offline.
"
        ),
        "{}",
        keygen.stdout
    );
    let (other_pk, plain_sk) = keypair(t.path(), "plain");
    let mut forms = secret_forms(&t.path().join("enc.key"), Some(pw));
    forms.extend(secret_forms(&plain_sk, None));
    forms.push(pw.to_string());
    assert_no_secret(&keygen, &forms);
    write(&t.path().join("d/a"), b"a");
    fs::create_dir_all(t.path().join("repo/.git")).unwrap();
    let plain_b64 = fs::read_to_string(&plain_sk)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    let garbled = format!("{}#{}", &plain_b64[..50], &plain_b64[51..]);
    let truncated = plain_b64[..150].to_string();
    let enc_text = fs::read_to_string(t.path().join("enc.key")).unwrap();
    let sign_from_env = |password: Option<&str>| {
        let mut cmd = warden(t.path());
        cmd.env("SK", &enc_text).env_remove("PW");
        if let Some(p) = password {
            cmd.env("PW", p);
        }
        run(cmd.args([
            "sign",
            "d",
            "--force",
            "--secret-key-env",
            "SK",
            "--password-env",
            "PW",
        ]))
    };
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
        // the encrypted key from the environment with a wrong password, then with none set
        sign_from_env(Some(&pw.to_uppercase())),
        sign_from_env(None),
        // a second key pair refused inside a git work tree: the password stays unsaid
        run(warden(&t.path().join("repo")).env("PW", pw).args([
            "keygen",
            "--password-env",
            "PW",
            "--secret-key",
            "in-tree.key",
        ])),
    ];
    let codes: Vec<i32> = runs.iter().map(|r| r.code).collect();
    assert_eq!(codes, [0, 2, 2, 2, 2, 2, 0, 2, 2, 2]);
    assert!(
        runs[8]
            .stderr
            .contains("environment variable PW (--password-env) is not set"),
        "{}",
        runs[8].stderr
    );
    assert!(!t.path().join("repo/in-tree.key").exists());
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
    // Nothing besides the key files holds the secret or the password: not the public keys, the
    // signatures, SHA256SUMS, nor anything else written under the test directory.
    let enc_sk = t.path().join("enc.key");
    let written = files_besides(t.path(), &[&enc_sk, &plain_sk]);
    assert!(written.len() >= 6, "{written:?}");
    for path in written {
        let bytes = fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for f in &forms {
            assert!(!text.contains(f.as_str()), "{f} in {}", path.display());
        }
    }
}
