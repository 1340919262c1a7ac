//! Runnable programs live beside this crate as examples.
