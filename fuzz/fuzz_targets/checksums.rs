//! SHA256SUMS parsing: whatever parses round-trips, and never names a path outside the folder.
#![no_main]
use libfuzzer_sys::fuzz_target;
use release_warden::minisign::{check_relative_name, ChecksumFile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = ChecksumFile::parse(text) {
        for name in file.names() {
            assert!(check_relative_name(name).is_ok(), "{name:?}");
        }
        assert_eq!(ChecksumFile::parse(&file.to_string()).unwrap(), file);
    }
});
