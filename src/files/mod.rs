//! Files: atomic writes (`atomic`), guarded reads of files warden does not control (`guarded`),
//! path questions (`paths`) and which files git tracks (`tracked`).

pub mod atomic;
pub mod guarded;
pub mod paths;
pub(crate) mod tracked;
