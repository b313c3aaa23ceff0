//! Files: atomic writes (`atomic`), guarded reads of files warden does not control (`guarded`),
//! and path questions (`paths`).

pub mod atomic;
pub mod guarded;
pub mod paths;
