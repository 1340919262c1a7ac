//! The permit guards: [`SemaphorePermit`] and [`OwnedSemaphorePermit`],
//! which give their permits back to the semaphore when dropped.

use std::fmt;
use std::sync::Arc;

use super::Semaphore;

/// Permits acquired from a [`Semaphore`], returned to it when dropped.
#[must_use = "dropping the permit releases it at once"]
pub struct SemaphorePermit<'a> {
    pub(super) sem: &'a Semaphore,
    pub(super) permits: usize,
}

/// Permits acquired from an `Arc<Semaphore>`, returned to it when dropped.
/// Owning the `Arc` lets the permit move into a spawned task.
#[must_use = "dropping the permit releases it at once"]
pub struct OwnedSemaphorePermit {
    pub(super) sem: Arc<Semaphore>,
    pub(super) permits: usize,
}

impl<'a> SemaphorePermit<'a> {
    /// Forgets the permits without releasing them: the semaphore's capacity
    /// shrinks by [`num_permits`](SemaphorePermit::num_permits).
    ///
    /// ```
    /// use weft::sync::Semaphore;
    ///
    /// let sem = Semaphore::new(2);
    /// sem.try_acquire().unwrap().forget();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The semaphore these permits came from (and go back to on drop).
    pub fn semaphore(&self) -> &Semaphore {
        self.sem
    }

    /// The number of permits this guard holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// Moves the permits of `other` into `self`.
    ///
    /// # Panics
    ///
    /// Panics if the two permits come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        merge_counts(
            &mut self.permits,
            &mut other.permits,
            std::ptr::eq(self.sem, other.sem),
        );
    }

    /// Splits `n` permits off into a new guard, or returns `None` if this
    /// guard holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = split_count(&mut self.permits, n)?;
        Some(SemaphorePermit {
            sem: self.sem,
            permits: n,
        })
    }
}

impl OwnedSemaphorePermit {
    /// Forgets the permits without releasing them: the semaphore's capacity
    /// shrinks by [`num_permits`](OwnedSemaphorePermit::num_permits).
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The number of permits this guard holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// Moves the permits of `other` into `self`.
    ///
    /// # Panics
    ///
    /// Panics if the two permits come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        merge_counts(
            &mut self.permits,
            &mut other.permits,
            Arc::ptr_eq(&self.sem, &other.sem),
        );
    }

    /// Splits `n` permits off into a new guard, or returns `None` if this
    /// guard holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = split_count(&mut self.permits, n)?;
        Some(OwnedSemaphorePermit {
            sem: self.sem.clone(),
            permits: n,
        })
    }
}

/// `merge`'s bookkeeping for both guard types: `from`'s permits move to
/// `into`, after checking that both came from the same semaphore.
#[track_caller]
fn merge_counts(into: &mut usize, from: &mut usize, same_semaphore: bool) {
    assert!(same_semaphore, "merging permits from different semaphores");
    *into += std::mem::take(from);
}

/// `split`'s bookkeeping for both guard types: takes `n` of `permits`, or
/// `None` if there are fewer.
fn split_count(permits: &mut usize, n: usize) -> Option<usize> {
    *permits = permits.checked_sub(n)?;
    Some(n)
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("sem", &self.sem)
            .field("permits", &self.permits)
            .finish()
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("sem", &self.sem)
            .field("permits", &self.permits)
            .finish()
    }
}
