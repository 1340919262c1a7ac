//! [`FileTimes`]: the timestamps [`File::set_times`](super::File::set_times)
//! applies.
//!
//! Owns: which times are set. A time left unset is not touched (std's
//! `FileTimes` passes it as `UTIME_OMIT`); the conversion to std's type
//! happens only when the times are applied, on the blocking pool.

use std::time::SystemTime;

/// The access and modification times (and, on Apple systems, the creation
/// time) to give a file with [`File::set_times`](super::File::set_times).
/// A time not set is left as it is.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use weft::fs::FileTimes;
///
/// let noon = SystemTime::UNIX_EPOCH + Duration::from_secs(43_200);
/// let times = FileTimes::new().set_modified(noon).set_accessed(noon);
/// # let _ = times;
/// ```
#[derive(Debug, Clone, Copy, Default)]
#[must_use = "FileTimes does nothing until File::set_times applies it"]
pub struct FileTimes {
    accessed: Option<SystemTime>,
    modified: Option<SystemTime>,
    #[cfg(target_vendor = "apple")]
    created: Option<SystemTime>,
}

impl FileTimes {
    /// No time set: applying it changes nothing.
    pub fn new() -> FileTimes {
        FileTimes::default()
    }

    /// Set the last access time.
    pub fn set_accessed(mut self, t: SystemTime) -> FileTimes {
        self.accessed = Some(t);
        self
    }

    /// Set the last modification time.
    pub fn set_modified(mut self, t: SystemTime) -> FileTimes {
        self.modified = Some(t);
        self
    }

    /// Set the creation time (Apple systems only).
    #[cfg(target_vendor = "apple")]
    pub fn set_created(mut self, t: SystemTime) -> FileTimes {
        self.created = Some(t);
        self
    }

    /// The same times as std's type.
    pub(crate) fn to_std(self) -> std::fs::FileTimes {
        let mut times = std::fs::FileTimes::new();
        if let Some(t) = self.accessed {
            times = times.set_accessed(t);
        }
        if let Some(t) = self.modified {
            times = times.set_modified(t);
        }
        #[cfg(target_vendor = "apple")]
        if let Some(t) = self.created {
            use std::os::darwin::fs::FileTimesExt as _;
            times = times.set_created(t);
        }
        times
    }
}
