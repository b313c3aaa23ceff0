//! Files: atomic writes (`atomic`), guarded reads of files warden does not control (`guarded`),
//! path questions (`paths`) and which files git tracks (`tracked`).

pub(crate) mod atomic;
pub(crate) mod guarded;
pub(crate) mod paths;
pub(crate) mod tracked;

pub use atomic::write_atomic;
pub use guarded::{read_capped, read_small_file, CappedReadError, SMALL_FILE_CAP};
pub use paths::under_root;
