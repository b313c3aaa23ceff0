//! Public key boxes, secret keys (box or bare line), signature files and trusted comments.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::minisign::TrustedComment;
use release_warden::release::find_secret_key;
use release_warden::minisign::{secret_key_protection, PublicKey, SecretKey, SecretKeyText};
use release_warden::minisign::SignatureFile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(pk) = PublicKey::parse(text) {
        // Round trip: what parses prints back to something that parses to the same key.
        assert_eq!(PublicKey::parse(&pk.to_string()).unwrap(), pk);
    }
    if let Ok(sig) = SignatureFile::parse(text) {
        let again = SignatureFile::parse(&sig.to_string()).unwrap();
        assert_eq!(again, sig);
    }
    let secret = SecretKeyText::new(text.to_string());
    let _ = secret_key_protection(&secret);
    // No password: encrypted keys stop before scrypt, so the fuzzer stays fast.
    let _ = SecretKey::load(&secret, None);
    // `warden check` runs this on every small file of a checkout.
    let _ = find_secret_key(text);
    if let Ok(c) = TrustedComment::parse(text) {
        let _ = c.value("file");
        let _ = c.has_marker("dry-run");
    }
});
