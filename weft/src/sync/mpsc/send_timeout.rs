//! `Sender::send_timeout`: a bounded send with a time limit.
//!
//! Owns nothing: it is `reserve` under `time::timeout`, then `Permit::send`.
//! Waiting for capacity (not holding the value in a future) is what lets it
//! hand the value back on timeout.

use super::error::SendTimeoutError;
use super::Sender;
use std::time::Duration;

impl<T> Sender<T> {
    /// Send `value`, waiting at most `timeout` for capacity.
    ///
    /// Returns the value in `SendTimeoutError::Timeout` if no slot freed up
    /// in time, or in `SendTimeoutError::Closed` if the receiver is gone.
    /// Cancel-safe in the same way as [`reserve`](Self::reserve): dropping
    /// the future loses no capacity (the value is dropped with it).
    ///
    /// # Panics
    /// Outside a runtime with the time driver (see [`crate::time::timeout`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use weft::sync::mpsc::{self, error::SendTimeoutError};
    /// # weft::runtime::Runtime::new().unwrap().block_on(async {
    /// let (tx, mut rx) = mpsc::channel(1);
    /// tx.send_timeout(1, Duration::from_millis(10)).await.unwrap();
    /// // Full: the second send times out and hands the value back.
    /// let err = tx.send_timeout(2, Duration::from_millis(10)).await.unwrap_err();
    /// assert_eq!(err, SendTimeoutError::Timeout(2));
    /// assert_eq!(rx.recv().await, Some(1));
    /// # });
    /// ```
    pub async fn send_timeout(
        &self,
        value: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        match crate::time::timeout(timeout, self.reserve()).await {
            Ok(Ok(permit)) => {
                permit.send(value);
                Ok(())
            }
            Ok(Err(_closed)) => Err(SendTimeoutError::Closed(value)),
            Err(_elapsed) => Err(SendTimeoutError::Timeout(value)),
        }
    }
}
