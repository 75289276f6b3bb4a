//! Reading a directory that changes while it is read: which entries
//! getdents gives next.
//!
//! A directory read returns a few entries per call, and a program may
//! remove or add entries between calls: `rm -r`, Python's
//! `shutil.rmtree`, and `subprocess` closing every descriptor it finds in
//! /proc/self/fd, each remove what they were just given. POSIX and Linux
//! promise that an entry neither removed nor added while the directory is
//! read is given exactly once. Counting positions does not keep that
//! promise: once the first entries are removed, the ones after them move
//! up, and the next call, starting at the old count, skips as many.
//!
//! So a read remembers the names it has given (`DirRead`), and each call
//! gives, in the listing's order, the entries it has not given yet. The
//! file's offset still counts entries (2 for `.` and `..`, then one per
//! name), so lseek and telldir see positions as before; a read that
//! starts at any other offset than where the last one stopped (a seek, or
//! the first call) takes the names before that position as given. The
//! memory is one name per entry given, for as long as the file is open on
//! the directory, as Linux's own readdir cursors on tmpfs cost one entry.

extern crate alloc;

use alloc::collections::BTreeSet;
use alloc::string::String;

/// One entry getdents may give: `.`, `..`, or the listing's entry at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Dot,
    DotDot,
    Entry(usize),
}

/// Where a read of a directory is: its offset, and the names given so far.
#[derive(Debug, Default)]
pub struct DirRead {
    at: u64,
    given: BTreeSet<String>,
}

impl DirRead {
    /// The read to continue at `offset` in the listing `names`: `saved`
    /// if it stopped there, else one that counts the names before the
    /// position as given (a seek, a first read).
    pub fn resume(saved: Option<DirRead>, offset: u64, names: &[&str]) -> DirRead {
        if let Some(read) = saved.filter(|r| r.at == offset) {
            return read;
        }
        let before = (offset.saturating_sub(2) as usize).min(names.len());
        DirRead {
            at: offset,
            given: names[..before].iter().map(|n| String::from(*n)).collect(),
        }
    }

    /// The entries not yet given, in order: `.` and `..` while the offset
    /// is before them, then the names this read has not given.
    pub fn pending<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = Next> + 'a {
        let dots = [Next::Dot, Next::DotDot]
            .into_iter()
            .skip(self.at.min(2) as usize);
        let rest = names
            .iter()
            .enumerate()
            .filter(|(_, n)| !self.given.contains(**n))
            .map(|(i, _)| Next::Entry(i));
        dots.chain(rest)
    }

    /// `next` was given: the offset moves past it, which is the value
    /// its record's `d_off` holds.
    pub fn gave(&mut self, next: Next, names: &[&str]) -> u64 {
        if let Next::Entry(i) = next {
            self.given.insert(String::from(names[i]));
        }
        self.at += 1;
        self.at
    }

    pub fn offset(&self) -> u64 {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Reads `dir` `per_call` entries at a time, letting `between` change
    /// it after each call; the names given.
    fn read_all(
        dir: &mut Vec<String>,
        per_call: usize,
        mut between: impl FnMut(&mut Vec<String>, &[String]),
    ) -> Vec<String> {
        let mut saved = None;
        let mut offset = 0;
        let mut all = Vec::new();
        loop {
            let names: Vec<&str> = dir.iter().map(String::as_str).collect();
            let mut read = DirRead::resume(saved.take(), offset, &names);
            let batch: Vec<Next> = read.pending(&names).take(per_call).collect();
            if batch.is_empty() {
                return all;
            }
            let mut got = Vec::new();
            for next in batch {
                offset = read.gave(next, &names);
                got.push(match next {
                    Next::Dot => ".".into(),
                    Next::DotDot => "..".into(),
                    Next::Entry(i) => names[i].to_string(),
                });
            }
            saved = Some(read);
            all.extend(got.iter().cloned());
            between(dir, &got);
        }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| alloc::format!("f{i:03}")).collect()
    }

    #[test]
    fn removing_what_was_given_skips_nothing() {
        let mut dir = names(100);
        let given = read_all(&mut dir, 7, |dir, got| dir.retain(|n| !got.contains(n)));
        assert_eq!(given.len(), 102, "{given:?}");
        assert!(dir.is_empty());
    }

    #[test]
    fn an_unchanged_entry_comes_once_whatever_else_changes() {
        let mut dir = names(50);
        let mut round = 0;
        // For twenty calls, a name comes (sorted in) and an unread one goes.
        let given = read_all(&mut dir, 5, |dir, _| {
            round += 1;
            if round <= 20 {
                dir.push(alloc::format!("f{round:02}x"));
                dir.sort();
                dir.retain(|n| n != &alloc::format!("f{:03}", 49 - round));
            }
        });
        for i in 0..50 {
            let name = alloc::format!("f{i:03}");
            let count = given.iter().filter(|n| **n == name).count();
            assert!(count <= 1, "{name} came {count} times");
            if dir.contains(&name) {
                assert_eq!(count, 1, "{name} stayed and never came");
            }
        }
    }

    #[test]
    fn a_seek_counts_positions_as_before() {
        let dir = names(10);
        let names: Vec<&str> = dir.iter().map(String::as_str).collect();
        let read = DirRead::resume(None, 5, &names);
        let next: Vec<Next> = read.pending(&names).collect();
        assert_eq!(next.first(), Some(&Next::Entry(3)));
        assert_eq!(next.len(), 7);
        let fresh = DirRead::resume(None, 0, &names);
        assert_eq!(fresh.pending(&names).count(), 12);
        let past = DirRead::resume(None, 99, &names);
        assert_eq!(past.pending(&names).count(), 0);
    }
}
