//! `StringAppend`: a caller's `String` lent out as a `Vec<u8>` while a read
//! appends to it, for `read_line` and `read_to_string`.
//!
//! Owns: the string's bytes while the read runs, and the length the string
//! had when the call began (`start`). Reading into the string's own
//! allocation, as Tokio does, saves a second buffer, its allocation and a
//! copy per call (a `read_line` loop cost 1.7× Tokio's instructions with
//! one).
//!
//! Invariant: `bytes[..start]` are the string's bytes as the caller left
//! them, so valid UTF-8; bytes after `start` go back into the string only
//! once `std::str::from_utf8` has accepted them. The string is given back
//! exactly once: by [`finish`](StringAppend::finish), or by `Drop` (the
//! future was dropped before it completed) with what was appended cut off.
//! Until then the caller's string is empty, but the caller cannot see it:
//! the future borrows it mutably.

use std::io;

use super::invalid_utf8_after;

/// What to keep of what was appended when the string is given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keep {
    /// Everything appended, if it is valid UTF-8 (else nothing).
    Appended,
    /// Nothing: the string goes back as the caller left it.
    Nothing,
}

#[derive(Debug)]
pub(super) struct StringAppend<'a> {
    string: &'a mut String,
    bytes: Vec<u8>,
    start: usize,
    given_back: bool,
}

impl<'a> StringAppend<'a> {
    pub(super) fn new(string: &'a mut String) -> StringAppend<'a> {
        let bytes = std::mem::take(string).into_bytes();
        StringAppend {
            start: bytes.len(),
            string,
            bytes,
            given_back: false,
        }
    }

    /// The string's bytes, to append to. Only appending keeps the invariant.
    pub(super) fn bytes(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// Bytes appended so far.
    pub(super) fn appended(&self) -> usize {
        self.bytes.len() - self.start
    }

    /// Gives the string back, with what `keep` says. With
    /// [`Keep::Appended`], fails with `InvalidData` (naming the whole
    /// string's UTF-8 error, as Tokio's) if what was appended is not UTF-8;
    /// the string then goes back as the caller left it.
    pub(super) fn finish(&mut self, keep: Keep) -> io::Result<()> {
        assert!(
            !self.given_back,
            "a read into a String polled after it completed"
        );
        if keep == Keep::Nothing {
            self.bytes.truncate(self.start);
            self.give_back();
            return Ok(());
        }
        let valid = std::str::from_utf8(&self.bytes[self.start..]).is_ok();
        if !valid {
            let appended = self.bytes.split_off(self.start);
            self.give_back();
            return Err(invalid_utf8_after(self.string, &appended));
        }
        self.give_back();
        Ok(())
    }

    fn give_back(&mut self) {
        let bytes = std::mem::take(&mut self.bytes);
        // SAFETY: module invariant: `bytes` is the string's own bytes plus,
        // only if `from_utf8` accepted them (in `finish`), appended ones;
        // every other path truncates to `start` first.
        *self.string = unsafe { String::from_utf8_unchecked(bytes) };
        self.given_back = true;
    }
}

impl Drop for StringAppend<'_> {
    fn drop(&mut self) {
        if !self.given_back {
            self.bytes.truncate(self.start);
            self.give_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_appended_bytes_are_kept_and_the_allocation_is_the_strings() {
        let mut s = String::with_capacity(64);
        s.push_str("héllo ");
        let before = s.as_ptr();
        let mut lent = StringAppend::new(&mut s);
        lent.bytes().extend_from_slice("wörld".as_bytes());
        assert_eq!(lent.appended(), 6);
        lent.finish(Keep::Appended).unwrap();
        drop(lent);
        assert_eq!(s, "héllo wörld");
        assert_eq!(s.as_ptr(), before, "no second buffer");
    }

    #[test]
    fn invalid_appended_bytes_leave_the_string_as_it_was() {
        let mut s = String::from("ok ");
        let mut lent = StringAppend::new(&mut s);
        lent.bytes().extend_from_slice(&[b'a', 0xff, b'b']);
        let err = lent.finish(Keep::Appended).unwrap_err();
        drop(lent);
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let utf8 = err.get_ref().unwrap().downcast_ref::<std::str::Utf8Error>();
        assert_eq!(utf8.unwrap().valid_up_to(), 4, "counts the prefix too");
        assert_eq!(s, "ok ");
    }

    #[test]
    fn keep_nothing_and_drop_give_the_string_back_unchanged() {
        let mut s = String::from("prefix");
        let mut lent = StringAppend::new(&mut s);
        lent.bytes().extend_from_slice(b" more");
        lent.finish(Keep::Nothing).unwrap();
        drop(lent);
        assert_eq!(s, "prefix");

        let mut lent = StringAppend::new(&mut s);
        lent.bytes().extend_from_slice(b" dropped");
        drop(lent);
        assert_eq!(s, "prefix", "a read dropped midway appends nothing");
    }
}
