//! Memory: copy-on-write, bad pointers, brk, mmap and its pages on demand,
//! the kernel's copies, shared file mappings, running out, mremap,
//! mprotect across fork, PROT_NONE, and a pointer from another process.

use super::*;

pub(super) static mut GLOBAL: u64 = 1;

pub(super) fn cow_isolation() -> Outcome {
    let mut heap = vec![7u8; 3 * 4096];
    let mut stack = [5u64; 64];
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        // The child writes everything, then tells the parent to look.
        // SAFETY: single-threaded; this is the child's own copy.
        unsafe { GLOBAL = 99 };
        heap.fill(9);
        stack[10] = 77;
        // SAFETY: as above.
        let ok = unsafe { GLOBAL } == 99 && heap.iter().all(|&b| b == 9) && stack[10] == 77;
        let _ = sys::write(w, b"x");
        sys::exit(if ok { 0 } else { 1 });
    }
    let mut b = [0u8; 1];
    let _ = sys::read(r, &mut b);
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    ensure!(
        sys::exited(status) == Some(0),
        "child did not see its own writes"
    );
    // SAFETY: single-threaded read of our copy.
    let global = unsafe { GLOBAL };
    ensure!(
        global == 1,
        "child's write to a global leaked into the parent ({global})"
    );
    ensure!(
        heap.iter().all(|&b| b == 7),
        "child's heap writes leaked into the parent"
    );
    ensure!(stack[10] == 5, "child's stack write leaked into the parent");
    // And the other way: the parent writes after fork, the child must not see it.
    let status = child_status(|| {
        let _ = sys::nanosleep(20_000_000);
        // SAFETY: single-threaded read.
        if unsafe { GLOBAL } == 1 { 0 } else { 1 }
    });
    // SAFETY: single-threaded write (the child has its own copy by now).
    unsafe { GLOBAL = 2 };
    ensure!(
        sys::exited(status?) == Some(0),
        "parent's write after fork leaked into the child"
    );
    Ok(())
}

/// Addresses no call may touch: NULL, the kernel half, unmapped user
/// memory, and a range running past the top of user space.
pub(super) const BAD: [(usize, &str); 5] = [
    (0, "NULL"),
    (0xffff_8000_0000_0000, "kernel half"),
    (0xffff_ffff_8000_0000, "kernel text"),
    (0x0000_1000_0000_0000, "unmapped"),
    (0x0000_7fff_ffff_fff0, "wraps past user top"),
];

pub(super) fn bad_pointers_are_efault() -> Outcome {
    let text = bad_pointers_are_efault as *const () as usize;
    let file = sys::open("/bin/true", O_RDONLY, 0).map_err(|e| e.message())?;
    let path = c"/bin/true".as_ptr() as usize;
    let mut checks: Vec<(String, Result<usize, Errno>)> = Vec::new();
    for (bad, what) in BAD {
        let mut check = |call: &str, r| checks.push((format!("{call}({what})"), r));
        check("read", raw(nr::READ, &[file as usize, bad, 64]));
        check("write", raw(nr::WRITE, &[1, bad, 64]));
        check("open", raw(nr::OPEN, &[bad, 0, 0]));
        check("stat path", raw(nr::STAT, &[bad, 0]));
        check("stat buf", raw(nr::STAT, &[path, bad]));
        check("fstat", raw(nr::FSTAT, &[file as usize, bad]));
        check("pipe", raw(nr::PIPE, &[bad]));
        check("execve", raw(nr::EXECVE, &[bad, 0, 0]));
        check("execve argv", raw(nr::EXECVE, &[path, bad, 0]));
        check("uname", raw(nr::UNAME, &[bad]));
        check("clock_gettime", raw(nr::CLOCK_GETTIME, &[1, bad]));
        check("nanosleep", raw(nr::NANOSLEEP, &[bad, 0]));
        check("getcwd", raw(nr::GETCWD, &[bad, 64]));
        check("mkdir", raw(nr::MKDIR, &[bad, 0]));
        check("chdir", raw(nr::CHDIR, &[bad]));
        check("kinfo", raw(nr::KINFO, &[bad]));
        check("proclist", raw(nr::PROCLIST, &[bad, 4]));
    }
    // Read into read-only memory (our own text) is EFAULT too.
    checks.push((
        "read(text)".into(),
        raw(nr::READ, &[file as usize, text, 16]),
    ));
    let _ = sys::close(file);
    for (what, result) in checks {
        ensure!(
            result == Err(Errno::EFAULT),
            "{what} gave {result:?}, want EFAULT"
        );
    }
    // A bad status pointer on wait4 must not lose the child.
    let pid = sys::fork().map_err(|e| e.message())?;
    if pid == 0 {
        sys::exit(5);
    }
    expect_err(
        "wait4(bad status)",
        raw(nr::WAIT4, &[pid as usize, 0xffff_8000_0000_0000, 0, 0]),
        Errno::EFAULT,
    )?;
    let status = sys::waitpid(pid as i32)
        .map_err(|e| format!("child lost after EFAULT: {}", e.message()))?;
    ensure!(sys::exited(status) == Some(5), "status {status:#x}");
    // A pipe's data survives a read into a bad buffer.
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    sys::write_all(w, b"kept").map_err(|e| e.message())?;
    expect_err(
        "read(pipe, bad)",
        raw(nr::READ, &[r as usize, 0, 4]),
        Errno::EFAULT,
    )?;
    let mut b = [0u8; 4];
    let n = sys::read(r, &mut b).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    ensure!(&b[..n] == b"kept", "pipe data lost after EFAULT");
    Ok(())
}

pub(super) fn brk_until_enomem() -> Outcome {
    let start = sys::brk(0);
    let step = 16 << 20;
    let mut top = start;
    loop {
        let want = top + step;
        let got = sys::brk(want);
        if got != want {
            ensure!(got == top, "a failed brk moved the break to {got:#x}");
            break;
        }
        // SAFETY: [top, want) was just given to us by brk.
        unsafe { core::ptr::write_volatile((want - 8) as *mut u64, 1) };
        top = want;
    }
    ensure!(
        top - start >= 64 << 20,
        "brk stopped after only {} MiB",
        (top - start) >> 20
    );
    ensure!(sys::brk(start) == start, "shrinking the break back");
    Ok(())
}

/// Runs `access` in a child, which must die of SIGSEGV; `what` names the
/// access in the failure.
pub(super) fn dies_of_sigsegv(what: &str, access: impl FnOnce()) -> Outcome {
    let status = child_status(|| {
        access();
        0
    })?;
    ensure!(
        sys::signaled(status) == Some(SIGSEGV),
        "{what} gave status {status:#x}"
    );
    Ok(())
}

pub(super) fn mmap_munmap_mprotect() -> Outcome {
    let len = 1 << 20;
    let p = sys::mmap_anon(len, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    // SAFETY: p..p+len is our fresh mapping.
    unsafe {
        for i in (0..len).step_by(4096) {
            ensure!(*p.add(i) == 0, "mmap memory not zeroed");
            *p.add(i) = i as u8 | 1;
        }
        ensure!(*p.add(4096) == 1, "read back");
    }
    sys::munmap(p, len).map_err(|e| e.message())?;
    dies_of_sigsegv("touching unmapped memory", || {
        // SAFETY: none: the page is gone and this must fault.
        unsafe { core::ptr::read_volatile(p) };
    })?;
    let q = sys::mmap_anon(8192, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    sys::mprotect(q, 8192, PROT_READ).map_err(|e| e.message())?;
    dies_of_sigsegv("writing read-only memory", || {
        // SAFETY: none: the page is read-only and this must fault.
        unsafe { core::ptr::write_volatile(q, 1) };
    })?;
    let _ = sys::munmap(q, 8192);
    expect_err(
        "mmap of length 0",
        sys::mmap_anon(0, PROT_READ),
        Errno::EINVAL,
    )?;
    expect_err(
        "munmap unaligned",
        sys::munmap(0x1001 as *mut u8, 4096),
        Errno::EINVAL,
    )
}

/// A mapping takes frames only as its pages are touched, by the program or
/// by the kernel copying into it.
pub(super) fn mmap_pages_come_on_demand() -> Outcome {
    let before = frames_in_use();
    let tables_before = own_table_frames();
    let len = 64 << 20;
    let p = sys::mmap_anon(len, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    let mapped = frames_in_use().saturating_sub(before);
    ensure!(mapped < 16, "64 MiB mapped took {mapped} frames");
    // SAFETY: p..p+len is our fresh mapping.
    unsafe {
        ensure!(*p.add(len / 2) == 0, "a page read first is not zero");
        *p.add(len - 1) = 7;
    }
    // The kernel's copy into a page not touched yet fills it too.
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    sys::write_all(w, b"on demand").map_err(|e| e.message())?;
    // SAFETY: 9 bytes inside the mapping, in a page nothing touched.
    let dst = unsafe { core::slice::from_raw_parts_mut(p.add(8192), 9) };
    let n = sys::read(r, dst).map_err(|e| e.message())?;
    ensure!(dst[..n] == *b"on demand", "read into a fresh page");
    let _ = (sys::close(r), sys::close(w));
    // Two pages written, each a frame; the one only read maps the shared
    // zero frame, which is no process's.
    let used = frames_in_use().saturating_sub(before);
    ensure!(
        (2..16).contains(&used),
        "two pages written took {used} frames"
    );
    // The page in the middle of the mapping is 32 MiB from both ends, in
    // a level-1 table of its own that no other mapping shares: a new one,
    // which /proc/self/status's VmPTE counts (frames_in_use leaves page
    // tables out).
    let tables = own_table_frames().saturating_sub(tables_before);
    ensure!(
        tables >= 1,
        "VmPTE did not grow for a page far from all others"
    );
    sys::munmap(p, len).map_err(|e| e.message())?;
    // Page tables stay until the address space goes (left out above); the
    // pages are back.
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames left after munmap");
    Ok(())
}

/// The kernel copies first and checks only where a copy stops
/// (mm/uaccess.rs): a stop at a page not there yet fills it, at a
/// copy-on-write page gives the writer its own copy, and anywhere the user
/// could not go is EFAULT. clock_gettime's and write's copies have no check
/// before them, so each case here goes through the fault and its fixup.
pub(super) fn kernel_copies_fill_and_unshare_pages() -> Outcome {
    let err = |e: Errno| e.message();
    let clock = |at: *mut u8| raw(nr::CLOCK_GETTIME, &[CLOCK_MONOTONIC as usize, at as usize]);
    let p = sys::mmap_anon(6 * 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // Output into a page not touched yet, and across into the next one.
    clock(p.wrapping_add(4096 - 8)).map_err(err)?;
    // SAFETY: inside the mapping; the call just filled these bytes.
    let secs = unsafe { (p.add(4096 - 8) as *const u64).read_unaligned() };
    let nanos = unsafe { (p.add(4096) as *const u64).read_unaligned() };
    ensure!(secs > 0 || nanos > 0, "clock_gettime wrote nothing");
    // A word that straddles a present page and one not there yet (the
    // copy moves eight bytes at a time, so the fault is at the word).
    // SAFETY: inside the mapping.
    unsafe { p.add(4 * 4096).write(1) };
    clock(p.wrapping_add(5 * 4096 - 4)).map_err(err)?;
    // Input from a page not touched yet: zeros.
    let (r, w) = sys::pipe().map_err(err)?;
    let sent = raw(
        nr::WRITE,
        &[w as usize, p.wrapping_add(2 * 4096) as usize, 16],
    );
    let mut got = [1u8; 16];
    let n = sys::read(r, &mut got).map_err(err)?;
    let _ = (sys::close(r), sys::close(w));
    ensure!(
        sent == Ok(16) && n == 16,
        "write from a fresh page: {sent:?}, read {n}"
    );
    ensure!(got == [0; 16], "a fresh page read as {got:?}");
    // Output into a page shared copy-on-write with the parent.
    // SAFETY: inside the mapping.
    unsafe { p.add(3 * 4096).write_bytes(0x5a, 16) };
    let status = child_status(|| {
        if clock(p.wrapping_add(3 * 4096)).is_err() {
            return 1;
        }
        // SAFETY: inside the child's copy of the mapping.
        if unsafe { p.add(3 * 4096).read() } == 0x5a {
            2
        } else {
            0
        }
    })?;
    ensure!(
        sys::exited(status) == Some(0),
        "the child's copy-on-write page: status {status:#x}"
    );
    // SAFETY: inside the mapping.
    let kept = unsafe { p.add(3 * 4096).read() };
    ensure!(
        kept == 0x5a,
        "the child's clock_gettime reached the parent's page"
    );
    // Where the user may not write, the copy fails: read-only, and a
    // timespec whose second half is PROT_NONE.
    sys::mprotect(p, 4096, PROT_READ).map_err(err)?;
    expect_err(
        "clock_gettime into a read-only page",
        clock(p),
        Errno::EFAULT,
    )?;
    sys::mprotect(p.wrapping_add(4096), 4096, 0).map_err(err)?;
    expect_err(
        "clock_gettime half into a PROT_NONE page",
        clock(p.wrapping_add(2 * 4096 - 8)),
        Errno::EFAULT,
    )?;
    // A write to a file from a buffer that goes bad part way writes what
    // comes before the fault, to the byte, as Linux's does.
    let _ = sys::mkdir("/ut", 0o755);
    let f = sys::open("/ut/short", O_CREAT | O_RDWR | O_TRUNC, 0o644).map_err(err)?;
    let whole = raw(nr::WRITE, &[f as usize, p as usize, 2 * 4096]);
    let straddling = raw(
        nr::WRITE,
        &[f as usize, p.wrapping_add(4096 - 3) as usize, 16],
    );
    let size = sys::fstat(f).map(|s| s.st_size);
    let _ = (sys::close(f), sys::unlink("/ut/short"));
    ensure!(size == Ok(4099), "the file holds {size:?} bytes, not 4099");
    ensure!(
        whole == Ok(4096) && straddling == Ok(3),
        "writes up to a PROT_NONE page: {whole:?} and {straddling:?}, not 4096 and 3"
    );
    sys::munmap(p, 6 * 4096).map_err(|e| e.message().into())
}

/// A shared mapping of a file maps the file's own frames: a store is what
/// `pread` returns. Stores into the last page past the file's end are not
/// the file's: when the file grows over them it reads zeros (Linux leaves
/// them there on some file systems; POSIX says zeros). Once unmapped,
/// closed and unlinked, every frame of the file comes back.
pub(super) fn mapped_file_stores_and_the_end_of_the_file() -> Outcome {
    let before = frames_in_use();
    let path = "/tmp/usertests-mapped";
    let fd = sys::open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644).map_err(|e| e.message())?;
    sys::write_all(fd, &[b'a'; 100]).map_err(|e| e.message())?;
    let page = 4096;
    let prot = (PROT_READ | PROT_WRITE) as usize;
    let p = raw(
        nr::MMAP,
        &[0, page, prot, MAP_SHARED as usize, fd as usize, 0],
    )
    .map_err(|e| e.message())? as *mut u8;
    // SAFETY: p..p+page is the fresh mapping of the file's first page.
    unsafe {
        *p.add(10) = b'M';
        *p.add(200) = b'X'; // past the end of the 100-byte file
    }
    let pread = |at: usize| -> Result<u8, String> {
        let mut byte = [0xffu8];
        let n = raw(
            nr::PREAD64,
            &[fd as usize, byte.as_mut_ptr() as usize, 1, at],
        )
        .map_err(|e| e.message())?;
        Ok(if n == 1 { byte[0] } else { 0xee })
    };
    ensure!(
        pread(10)? == b'M',
        "a store through the mapping is the file's"
    );
    ensure!(pread(200)? == 0xee, "the file has no byte 200 yet");
    sys::ftruncate(fd, 300).map_err(|e| e.message())?;
    let grown = pread(200)?;
    ensure!(
        grown == 0,
        "byte 200 after growing the file is {grown:#x}, not 0"
    );
    // SAFETY: still mapped.
    let seen = unsafe { *p.add(200) };
    ensure!(
        seen == 0,
        "the mapping sees {seen:#x} at byte 200, not the file's 0"
    );
    sys::munmap(p, page).map_err(|e| e.message())?;
    sys::close(fd).map_err(|e| e.message())?;
    sys::unlink(path).map_err(|e| e.message())?;
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 8, "{left} frames left after unmapping and deleting");
    Ok(())
}

/// Mappings may promise more than there is (each one alone fits); the
/// process that touches past the end dies of SIGKILL, and every frame it
/// had comes back.
pub(super) fn out_of_memory_at_a_fault_kills_only_the_toucher() -> Outcome {
    let before = frames_in_use();
    let status = child_status(|| {
        // 2 GiB promised in all, four times the machine's memory.
        let chunk = 64 << 20;
        let mut chunks = Vec::new();
        for _ in 0..32 {
            match sys::mmap_anon(chunk, PROT_READ | PROT_WRITE) {
                Ok(p) => chunks.push(p),
                Err(_) => return 2,
            }
        }
        for p in chunks {
            for i in (0..chunk).step_by(4096) {
                // SAFETY: inside the fresh mapping.
                unsafe { core::ptr::write_volatile(p.add(i), 1) };
            }
        }
        3
    })?;
    ensure!(sys::signaled(status) == Some(SIGKILL), "status {status:#x}");
    let left = frames_in_use().saturating_sub(before);
    ensure!(left < 16, "{left} frames still in use after the child died");
    Ok(())
}

pub(super) extern "C" fn spin_until_killed(_: usize) {
    loop {
        core::hint::spin_loop();
    }
}

/// When wait4 hands back a child, everything the child had is back: its
/// memory, and the kernel stacks of its threads, which on several CPUs
/// the threads' last CPUs free a moment after the child became a zombie.
/// Half the rounds reap with WNOHANG in a loop, as a SIGCHLD handler does.
pub(super) fn a_reaped_child_has_given_back_every_frame() -> Outcome {
    let child = || {
        // A second thread still running when the process exits.
        match libc_lite::thread::spawn(spin_until_killed, 0) {
            Ok(thread) => core::mem::forget(thread),
            Err(_) => return 2,
        }
        sys::sched_yield();
        0
    };
    // The first round lets this process's own tables and heap settle.
    child_status(child)?;
    let before = frames_in_use();
    for round in 0..30 {
        let pid = sys::fork().map_err(|e| e.message())?;
        if pid == 0 {
            sys::exit(child());
        }
        let status = if round % 2 == 0 {
            sys::waitpid(pid as i32).map_err(|e| e.message())?
        } else {
            loop {
                match sys::wait4(pid as i32, WNOHANG).map_err(|e| e.message())? {
                    (0, _) => sys::sched_yield(),
                    (_, status) => break status,
                }
            }
        };
        ensure!(sys::exited(status) == Some(0), "status {status:#x}");
        let now = frames_in_use();
        ensure!(
            now == before,
            "round {round}: {before} frames in use before the child, {now} after reaping it"
        );
    }
    Ok(())
}

pub(super) fn mremap_moves_grows_and_shrinks() -> Outcome {
    let p = sys::mmap_anon(3 * 4096, PROT_READ | PROT_WRITE).map_err(|e| e.message())?;
    // SAFETY: p..p+3 pages is our fresh mapping.
    unsafe {
        for i in 0..3 {
            *p.add(i * 4096) = 10 + i as u8;
        }
    }
    expect_err(
        "growing without MREMAP_MAYMOVE",
        sys::mremap(p, 3 * 4096, 6 * 4096, false),
        Errno::ENOMEM,
    )?;
    let q = sys::mremap(p, 3 * 4096, 6 * 4096, true).map_err(|e| e.message())?;
    // SAFETY: q..q+6 pages is the moved mapping.
    unsafe {
        for i in 0..3 {
            ensure!(*q.add(i * 4096) == 10 + i as u8, "page {i} lost its data");
        }
        for i in 3..6 {
            ensure!(*q.add(i * 4096) == 0, "grown page {i} not zeroed");
            *q.add(i * 4096) = 1;
        }
    }
    if q != p {
        // SAFETY: write(1, p, 1) with p unmapped: the kernel must refuse it.
        let ret = unsafe { libc_lite::syscall::syscall(nr::WRITE, &[1, p as usize, 1]) };
        expect_err(
            "writing from the old range",
            Errno::from_return(ret),
            Errno::EFAULT,
        )?;
    }
    let r = sys::mremap(q, 6 * 4096, 4096, false).map_err(|e| e.message())?;
    ensure!(r == q, "shrinking moved the mapping");
    expect_err(
        "mremap of an unmapped range",
        sys::mremap(0x1000 as *mut u8, 4096, 8192, true),
        Errno::EFAULT,
    )?;
    expect_err(
        "mremap to length 0",
        sys::mremap(q, 4096, 0, true),
        Errno::EINVAL,
    )?;
    sys::munmap(q, 4096).map_err(|e| e.message().into())
}

/// A page of `.data` of its own, so mprotect on it touches nothing else.
#[repr(C, align(4096))]
pub(super) struct DataPage([u8; 4096]);
pub(super) static mut DATA_PAGE: DataPage = DataPage([1; 4096]);

/// Runs `child` in a forked child, which must exit 0, then checks that the
/// parent's byte at `p` is still `want`: whatever the child did to its
/// copy of the page, the parent's memory is its own.
pub(super) fn parent_keeps(
    what: &str,
    p: *mut u8,
    want: u8,
    child: impl FnOnce() -> i32,
) -> Outcome {
    let status = child_status(child)?;
    ensure!(
        sys::exited(status) == Some(0),
        "{what}: child status {status:#x}"
    );
    // SAFETY: `p` is a mapped, readable page of the caller's.
    let seen = unsafe { p.read_volatile() };
    ensure!(
        seen == want,
        "{what}: the child's write reached the parent ({seen}, want {want})"
    );
    Ok(())
}

/// A child's write through `p` after mprotect(PROT_READ) and back to
/// `prot`: the page is still shared with the parent, so the write must get
/// its own copy (the copy-on-write rule in mm::paging::Space::protect).
pub(super) fn write_after_reprotect(p: *mut u8, prot: u32) -> i32 {
    let reprotected = sys::mprotect(p, 4096, PROT_READ)
        .and_then(|()| sys::mprotect(p, 4096, prot))
        .is_ok();
    // SAFETY: the page is ours and was just made writable again.
    unsafe { p.write_volatile(2) };
    // SAFETY: as above.
    i32::from(!reprotected || unsafe { p.read_volatile() } != 2)
}

/// Process isolation through every path that changes a page's rights or
/// sharing after fork: mprotect R -> RW and R -> RWX of an anonymous and a
/// `.data` page, a page read-only at fork made writable later, a shared
/// page moved by mremap, and a profil buffer in such a page. The child
/// writes each time; the parent must never see it.
pub(super) fn private_pages_stay_private_after_mprotect() -> Outcome {
    let err = |e: Errno| e.message();
    let anon = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: a fresh page of ours.
    unsafe { anon.write_volatile(1) };
    let data = (&raw mut DATA_PAGE).cast::<u8>();
    for (what, p) in [("anonymous page", anon), (".data page", data)] {
        parent_keeps(&format!("{what}, R -> RW"), p, 1, || {
            write_after_reprotect(p, PROT_READ | PROT_WRITE)
        })?;
        parent_keeps(&format!("{what}, R -> RWX"), p, 1, || {
            write_after_reprotect(p, PROT_READ | PROT_WRITE | PROT_EXEC)
        })?;
    }
    // Read-only at fork (shared without the copy-on-write mark), made
    // writable in the child.
    sys::mprotect(anon, 4096, PROT_READ).map_err(err)?;
    parent_keeps("read-only at fork, RW in the child", anon, 1, || {
        if sys::mprotect(anon, 4096, PROT_READ | PROT_WRITE).is_err() {
            return 1;
        }
        // SAFETY: made writable just above.
        unsafe { anon.write_volatile(3) };
        0
    })?;
    sys::mprotect(anon, 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // Moved by mremap in the child, then written.
    parent_keeps("moved by mremap", anon, 1, || {
        match sys::mremap(anon, 4096, 3 * 4096, true) {
            Ok(moved) => {
                // SAFETY: the moved mapping's first page.
                unsafe { moved.write_volatile(4) };
                0
            }
            Err(_) => 1,
        }
    })?;
    // A profil buffer in a page shared with the parent: the child's bins
    // must land in the child's copy.
    let bins = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    parent_keeps("profil buffer", bins, 0, || {
        if sys::mprotect(bins, 4096, PROT_READ)
            .and_then(|()| sys::mprotect(bins, 4096, PROT_READ | PROT_WRITE))
            .is_err()
        {
            return 1;
        }
        // SAFETY: 2048 bins in our own page, written only by the kernel
        // while profiling is on.
        let buffer = unsafe { core::slice::from_raw_parts_mut(bins.cast::<u16>(), 2048) };
        // Scale 1: every pc below 256 MiB counts into one of the first bins.
        if sys::profil(buffer, 0, 1).is_err() {
            return 1;
        }
        let start = sys::kinfo().map_or(0, |k| k.ticks);
        while sys::kinfo().map_or(u64::MAX, |k| k.ticks) < start + 20 {
            core::hint::spin_loop();
        }
        let _ = sys::profil(&mut [], 0, 0);
        // SAFETY: as above; profiling is off now.
        let counted: u64 = unsafe { core::slice::from_raw_parts(bins.cast::<u16>(), 2048) }
            .iter()
            .map(|&b| u64::from(b))
            .sum();
        i32::from(counted == 0)
    })?;
    // SAFETY: the parent's own buffer, never profiled into.
    let parent_bins = unsafe { core::slice::from_raw_parts(bins.cast::<u16>(), 2048) };
    ensure!(
        parent_bins.iter().all(|&b| b == 0),
        "profil: the child's samples reached the parent's buffer"
    );
    let _ = sys::munmap(anon, 4096);
    sys::munmap(bins, 4096).map_err(|e| e.message().into())
}

/// PROT_NONE: every access from user mode faults, every system call handed
/// the page fails with EFAULT, and the contents come back with the rights.
pub(super) fn prot_none_pages_are_inaccessible() -> Outcome {
    let err = |e: Errno| e.message();
    let p = sys::mmap_anon(4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: a fresh page of ours.
    unsafe { p.write_volatile(7) };
    sys::mprotect(p, 4096, 0).map_err(err)?;
    dies_of_sigsegv("a read of a PROT_NONE page", || {
        // SAFETY: none: the page is PROT_NONE and this must fault.
        unsafe { core::ptr::read_volatile(p) };
    })?;
    dies_of_sigsegv("a write of a PROT_NONE page", || {
        // SAFETY: none: the page is PROT_NONE and this must fault.
        unsafe { p.write_volatile(1) };
    })?;
    expect_err(
        "write(2) from a PROT_NONE page",
        raw(nr::WRITE, &[1, p as usize, 1]),
        Errno::EFAULT,
    )?;
    let (r, w) = sys::pipe().map_err(err)?;
    let _ = sys::write(w, b"x");
    let into = raw(nr::READ, &[r as usize, p as usize, 1]);
    let _ = sys::close(r);
    let _ = sys::close(w);
    expect_err("read(2) into a PROT_NONE page", into, Errno::EFAULT)?;
    sys::mprotect(p, 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: readable again.
    let kept = unsafe { p.read_volatile() };
    ensure!(kept == 7, "the page came back holding {kept}, not 7");
    // mmap(PROT_NONE) reserves memory a later mprotect opens (as glibc
    // does for thread stacks).
    let q = sys::mmap_anon(2 * 4096, 0).map_err(err)?;
    dies_of_sigsegv("a read of mmap(PROT_NONE) memory", || {
        // SAFETY: none: PROT_NONE, this must fault.
        unsafe { core::ptr::read_volatile(q) };
    })?;
    sys::mprotect(q, 2 * 4096, PROT_READ | PROT_WRITE).map_err(err)?;
    // SAFETY: opened just above.
    unsafe {
        ensure!(q.add(4096).read_volatile() == 0, "not zeroed");
        q.add(4096).write_volatile(5);
    }
    let _ = sys::munmap(q, 2 * 4096);
    sys::munmap(p, 4096).map_err(|e| e.message().into())
}

/// munmap of the whole user half (its own text included) must end the
/// process quickly, not walk 2^35 empty pages with the kernel locked.
pub(super) fn munmap_of_everything_is_quick() -> Outcome {
    let t0 = sys::monotonic_nanos();
    let status = child_status(|| {
        // SAFETY: none: the process unmaps its own code and must die of it.
        unsafe { libc_lite::syscall::syscall(nr::MUNMAP, &[0x1_0000, (1 << 47) - 0x2_0000]) };
        0
    })?;
    let took = (sys::monotonic_nanos() - t0) / 1_000_000;
    ensure!(sys::signaled(status) == Some(SIGSEGV), "status {status:#x}");
    ensure!(took < 10_000, "took {took} ms");
    let huge = sys::mmap_anon(1 << 40, PROT_READ | PROT_WRITE);
    expect_err("mmap of 1 TiB", huge, Errno::ENOMEM)
}

/// A pointer that is good in one process means nothing in another: the
/// other's system calls get EFAULT and a direct access faults.
pub(super) fn a_foreign_pointer_is_efault() -> Outcome {
    const FOREIGN: usize = 0x3000_0000;
    let (r, w) = sys::pipe().map_err(|e| e.message())?;
    let check = move || -> i32 {
        // The parent maps FOREIGN after this fork; wait until it has.
        let mut go = [0u8; 1];
        if sys::read(r, &mut go) != Ok(1) {
            return 1;
        }
        // SAFETY: write(w, FOREIGN, 16): unmapped here, the kernel must refuse it.
        let ret = unsafe { libc_lite::syscall::syscall(nr::WRITE, &[w as usize, FOREIGN, 16]) };
        if Errno::from_return(ret) != Err(Errno::EFAULT) {
            return 2;
        }
        // SAFETY: read(r, FOREIGN, 1): as above.
        let ret = unsafe { libc_lite::syscall::syscall(nr::READ, &[r as usize, FOREIGN, 1]) };
        if Errno::from_return(ret) != Err(Errno::EFAULT) {
            return 3;
        }
        match child_status(|| {
            // SAFETY: none: FOREIGN is not mapped in this process; must fault.
            unsafe { core::ptr::read_volatile(FOREIGN as *const u8) as i32 }
        }) {
            Ok(s) if sys::signaled(s) == Some(SIGSEGV) => 0,
            _ => 4,
        }
    };
    let pid = match sys::fork().map_err(|e| e.message())? {
        0 => sys::exit(check()),
        pid => pid,
    };
    let mapped = sys::mmap_fixed(FOREIGN, 4096, PROT_READ | PROT_WRITE);
    if let Ok(p) = mapped {
        // SAFETY: just mapped.
        unsafe { p.write_bytes(0x42, 4096) };
    }
    let _ = sys::write(w, b"g");
    let status = sys::waitpid(pid as i32).map_err(|e| e.message())?;
    let _ = sys::close(r);
    let _ = sys::close(w);
    mapped.map_err(|e| e.message())?;
    let _ = sys::munmap(FOREIGN as *mut u8, 4096);
    ensure!(
        sys::exited(status) == Some(0),
        "check {status:#x} failed (2 write, 3 read, 4 direct access)"
    );
    Ok(())
}
